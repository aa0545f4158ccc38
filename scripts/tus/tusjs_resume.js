// Uploads FILE to a tus server with tus-js-client in 1 MiB chunks, aborts
// after the first chunk as if interrupted, then resumes with a new Upload
// from the first one's URL. Prints the offset it resumed from.
//
//   NODE_PATH=.../node_modules node tusjs_resume.js http://127.0.0.1:9428/uploads/ FILE NAME
const tus = require('tus-js-client')
const fs = require('fs')

const [endpoint, path, name] = process.argv.slice(2)
const data = fs.readFileSync(path)
const fail = (err) => { console.error('error', err.message || err); process.exit(1) }

const first = new tus.Upload(data, {
  endpoint,
  chunkSize: 1 << 20,
  metadata: { filename: name },
  onError: fail,
  onChunkComplete: (chunk, sent) => {
    if (sent >= 1 << 20 && !first.aborted) {
      first.aborted = true
      first.abort().then(resume, fail)
    }
  },
})
first.start()

function resume () {
  const second = new tus.Upload(data, {
    uploadUrl: first.url,
    chunkSize: 1 << 20,
    metadata: { filename: name },
    onError: fail,
    onSuccess: () => console.log('done', data.length),
  })
  second.start()
  // tus-js-client asks the server for the offset (HEAD) before it sends.
  console.log('resumed-from-url', first.url)
}
