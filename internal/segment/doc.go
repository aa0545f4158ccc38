// Package segment stores NDJSON lines durably in append-only segment files,
// partitioned by day, written by one group-commit writer. It is the storage
// under `spate serve`: the ingest handler calls Append, the query and
// download handlers read the files (List) like any other NDJSON input.
//
// # On-disk format
//
//	DIR/.lock                                               flock held by the open Store
//	DIR/.checkpoint                                         checkpoint log (Options.Checkpoint only)
//	DIR/0-0/2026-11-22/seg-0000000000000040.ndjson.zst      sealed and compressed (zstd frames of whole lines)
//	DIR/0-0/2026-11-22/seg-0000000000000040.ndjson.zst.idx  its sidecar index (package segindex)
//	DIR/0-0/2026-11-22/seg-0000000000000041.ndjson          active, or sealed and not yet compressed
//	DIR/0-0/2026-11-22/seg-0000000000000042.ndjson.zst.tmp  compression in progress
//	DIR/7-8/2026-11-22/seg-0000000000000043.ndjson          tenant 7:8 (AccountID 7, ProjectID 8)
//
// The first level is the tenant (Group.Tenant), "AccountID-ProjectID"; the
// second the UTC date the caller gave (Group.Day). Each tenant's files live
// apart, so a tenant is removed with its directory. Segment sequence
// numbers are global to DIR (over tenants), increase across restarts and
// never repeat; within a tenant's day, files in sequence order hold its
// lines in the order they were acknowledged. Day directories directly under
// DIR are the layout before tenants: readers take them as tenant 0:0, and
// Open moves them under DIR/0-0. Every file holds whole lines exactly as
// given to Append, each ending in '\n'; a .zst decompresses to exactly the
// plain segment it replaced. Segments have no header, index or checksum of
// their own: grep, zstdcat and `spate query` read the files directly.
//
// A .zst is a run of independent zstd frames, each holding whole lines, at
// most BlockSize bytes of them (a longer line is a frame of its own), so a
// reader can decode any frame alone. With Options.IndexLines, each .zst
// gets a sidecar index, written after it (through a .idx.tmp, fsynced and
// renamed): where each frame is, what its lines hold, and hot columns (see
// package segindex). The sidecar is a cache: readers check it against its
// segment and read the segment itself when it does not match, and Open
// rewrites (as frames, with a fresh sidecar) every .zst whose sidecar is
// missing, stale or damaged, including segments compressed as one frame
// before frames existed.
//
// Each tenant's day has at most one active segment. The writer seals it
// and starts a new one when the next request would take it past
// Options.MaxSegmentBytes or when it is older than Options.MaxSegmentAge,
// and seals the least recently written ones when more than four days of a
// tenant, or more than 256 segments in all, are active. One request's
// lines for one day always land in a single segment. Sealed segments are
// compressed in the background, Options.CompressDelay after sealing,
// unless Options.NoCompress; the plain file stays beside its .zst for 10 s.
//
// Readers: when both seg-N.ndjson and seg-N.ndjson.zst exist, read only the
// .zst (the plain file is about to be removed); skip *.tmp; if a listed
// .ndjson has vanished, read its .zst; drop a last line without '\n' (the
// active segment may be mid-write). List applies these rules; Snapshot
// also reads each segment only as far as its metadata says is
// acknowledged (see Meta).
//
// # Durability
//
// Append returns nil (the acknowledgement) only after its lines are written
// with write(2) to the active segment of their day, and in SyncBatch mode
// after that segment is fsynced too. Therefore:
//
//   - Process crash (kill -9, panic, OOM kill) in any mode: every
//     acknowledged line survives, because written data is in the page cache.
//   - Power loss or kernel crash: SyncBatch keeps every acknowledged line;
//     SyncInterval may lose lines acknowledged in the last
//     Options.SyncInterval; SyncNever may lose anything the kernel had not
//     written back (typically the last 30 s).
//
// In every mode, after a restart each acknowledged line that survived is
// present exactly once and no partial line is visible: Open truncates the
// torn tail of every plain segment back to its last '\n' (logging the file
// and both sizes), removes compression leftovers, and seals every plain
// segment, so new lines go to new files. Lines of a request that was not
// acknowledged (an error, a cancelled wait, or a crash before the
// acknowledgement) may or may not be present, as whole lines: a client that
// retries gets at-least-once delivery.
//
// Recovery checks only that a file ends with a complete line. After a power
// loss in SyncInterval or SyncNever mode, some filesystems can leave
// unwritten (zero-filled) blocks before the last complete line; such bytes
// are kept.
//
// # Checkpoints
//
// A store opened with Options.Checkpoint (or whose DIR has a
// .checkpoint file) makes its lines and its callers' positions in their
// sources one atomic unit, for a consumer that must neither lose nor
// duplicate what it copies (spate consume: a Kafka partition's offset).
// Requests may carry marks (EnqueueMarked, Mark). After each batch is
// written (and, in SyncBatch, fsynced), the writer appends a checkpoint
// record to DIR/.checkpoint (and fsyncs it, in SyncBatch) before it
// acknowledges the batch: the sequence number the next new segment will
// take, the size of every active segment, and every acknowledged mark. A
// record cut short by a crash has a wrong length or checksum and is
// ignored. Open brings the plain segments back to the last checkpoint: it
// removes those created after it and cuts the active ones back to the
// sizes it gives, so that after any crash the store holds exactly the
// lines of the acknowledged requests (a batch fsynced whose record was
// not is undone) and Marks returns exactly their marks. Segments are
// sealed, compressed and indexed only after a checkpoint covers them. A
// failed batch is rolled back with its marks, and the store fails every
// later batch until it is reopened: requests with marks form a sequence,
// and a later mark must not pass lines that were lost. Cost: one record (about 100 bytes per active segment and
// mark) and, in SyncBatch, one more fsync per batch. In SyncInterval and
// SyncNever the record is not fsynced: the unit holds across a process
// crash, not a power loss.
//
// New files and directories are fsynced into their parent outside
// SyncNever. Compression always writes a .tmp, fsyncs it, renames it and
// fsyncs the directory before removing the plain segment, in every mode.
//
// A failed write or fsync fails every request of its batch; the segments
// the batch touched are truncated back (best effort) and sealed, and the
// next batch starts new segments. A failed background fsync (SyncInterval)
// can only be logged and counted in Stats.WriteErrors.
//
// # Concurrency
//
// A Store's methods are safe for concurrent use. Append copies each
// request into the last pending batch, one buffer per day, and waits; one
// writer goroutine takes a batch, writes each day's buffer with one
// write(2) per segment, fsyncs each touched segment once (SyncBatch), and
// acknowledges the whole batch at once. While it fsyncs, new requests fill
// the next batch, so the fsync cost is shared by every request that
// arrived meanwhile. A batch is capped at 8 MiB (a bigger request is a
// batch of its own) so that queue space is released in steps.
//
// The queue is bounded in bytes (Options.MaxQueueBytes), counting a batch
// until it is acknowledged. A request that does not fit fails at once with
// ErrQueueFull, unless it is enqueued with Enqueue(..., wait=true), which
// waits for room (callers that do not wait get ErrQueueFull while anyone
// waits, so waiters are not starved); one larger than the whole queue fails
// with ErrTooLarge. Append never blocks on a full queue. Enqueue returns as
// soon as the request is copied, so a caller can enqueue the parts of a long
// stream one after another, in order, and wait for their Pending results
// later: the writer takes batches in order.
//
// Only one Store may open a DIR at a time (ErrLocked, Linux only). All file
// access goes through an os.Root, so nothing outside DIR is touched.
//
// # Costs
//
// Per request: one pass to count lines, one copy into the queue under the
// queue lock, one channel wait. Per batch: one write(2) per day (more only
// when it rotates), in SyncBatch one fsync per touched segment (typically
// 0.1–10 ms, the dominant cost; batching amortises it), one Observe call.
// Per new segment outside SyncNever: one directory fsync (two for a new
// day). After each batch, one in-place write of each touched segment's
// metadata (no fsync). Queue memory is at most about 2 × MaxQueueBytes
// (buffers grow by doubling) plus four reusable day buffers of at most
// 16 MiB each. Compression runs on one goroutine, on a thread of lower CPU
// priority, with one zstd encoder (fastest level), one BlockSize frame at a
// time (2 MiB of buffer); the sidecar costs one IndexLines call per line and
// holds the segment's compressed columns in memory until it is written
// (about 40% of the .zst's size for `spate gen` logs).
package segment
