"""Uploads FILE to a tus server with tuspy in 1 MiB chunks, stops after the
first chunk as if interrupted, then resumes with a new uploader from the
upload's URL. Prints the offset it resumed from.

    python tuspy_resume.py http://127.0.0.1:9428/uploads/ FILE NAME
"""
import sys

from tusclient import client

endpoint, path, name = sys.argv[1], sys.argv[2], sys.argv[3]
c = client.TusClient(endpoint)
first = c.uploader(file_path=path, chunk_size=1 << 20, metadata={"filename": name})
first.upload_chunk()  # then the client "dies"
url = first.url
resumed = c.uploader(file_path=path, chunk_size=1 << 20, url=url, metadata={"filename": name})
print("resumed-from", resumed.get_offset())
resumed.upload()
print("done", resumed.offset)
