package benchwrite

import (
	"errors"
	"io"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Test hooks: the raw calls behind file, variables so that tests can make
// them transfer fewer bytes than asked (short writes) or fail.
var (
	sysWrite     = unix.Write
	sysWritev    = rawWritev
	sysFallocate = unix.Fallocate
)

// rawWritev is writev(2) over iov, which must not be empty. unix.Writev
// would build (allocate) a new iovec array on every call; the writev
// writer reuses one.
func rawWritev(fd int, iov []unix.Iovec) (int, error) {
	n, _, errno := unix.Syscall(unix.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(&iov[0])), uintptr(len(iov)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// file is the writers' only way to the kernel: every call goes through one
// of its methods and is counted in n. It is not safe for concurrent use.
type file struct {
	f   *os.File // kept alive so that its finalizer cannot close fd
	fd  int
	n   Syscalls
	iov []unix.Iovec // writev's scratch; its pointers keep the records alive during the call
}

// newFile wraps f. The caller keeps ownership of f and closes it.
func newFile(f *os.File) *file {
	return &file{f: f, fd: int(f.Fd())}
}

// Write implements io.Writer with write(2) at the file offset, repeating
// the call after a short write or EINTR until p is written; each call is
// counted. bufio.Writer flushes land here.
func (f *file) Write(p []byte) (int, error) {
	done := 0
	for done < len(p) {
		f.n.Write++
		n, err := sysWrite(f.fd, p[done:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return done, err
		}
		if n == 0 {
			return done, io.ErrShortWrite
		}
		done += n
	}
	return done, nil
}

// writev issues one writev(2) of bufs at the file offset and returns the
// bytes written, which may be fewer than asked: the caller advances over
// what was written and calls again. len(bufs) must not exceed IOV_MAX.
// Empty buffers are skipped; with nothing to write it returns 0 and no
// call is made.
func (f *file) writev(bufs [][]byte) (int, error) {
	f.iov = f.iov[:0]
	for _, b := range bufs {
		if len(b) > 0 {
			v := unix.Iovec{Base: &b[0]}
			v.SetLen(len(b))
			f.iov = append(f.iov, v)
		}
	}
	defer clear(f.iov) // drop the references to the records
	if len(f.iov) == 0 {
		return 0, nil
	}
	for {
		f.n.Writev++
		n, err := sysWritev(f.fd, f.iov)
		if err != unix.EINTR {
			return n, err
		}
	}
}

// datasync makes the file's data, and the metadata needed to read it back
// (its size), durable with fdatasync(2).
func (f *file) datasync() error {
	f.n.Fdatasync++
	return ignoringEINTR(func() error { return unix.Fdatasync(f.fd) })
}

// msync writes the dirty pages of b, a page-aligned part of a shared
// mapping of the file, and waits for them (MS_SYNC). On Linux this is
// fdatasync limited to that range.
func (f *file) msync(b []byte) error {
	f.n.Msync++
	return unix.Msync(b, unix.MS_SYNC)
}

// errNoFallocate reports that the file system cannot preallocate.
var errNoFallocate = errors.New("fallocate is not supported")

// fallocate allocates blocks for [off, off+n) and extends the file size to
// cover it. It returns errNoFallocate (wrapped) when the file system lacks
// fallocate(2); the call is counted either way.
func (f *file) fallocate(off, n int64) error {
	f.n.Fallocate++
	err := ignoringEINTR(func() error { return sysFallocate(f.fd, 0, off, n) })
	if err == unix.EOPNOTSUPP || err == unix.ENOSYS {
		return errors.Join(errNoFallocate, err)
	}
	return err
}

// ftruncate sets the file size to n, leaving any new range as a hole.
func (f *file) ftruncate(n int64) error {
	f.n.Ftruncate++
	return ignoringEINTR(func() error { return unix.Ftruncate(f.fd, n) })
}

// mmap maps n bytes of the file from off (a multiple of the page size)
// shared and writable: stores reach the page cache, and from there the
// file, without a write call. A store to a page beyond the end of the
// file, or one the file system cannot allocate (ENOSPC on a sparse file),
// raises SIGBUS.
func (f *file) mmap(off int64, n int) ([]byte, error) {
	f.n.Mmap++
	return unix.Mmap(f.fd, off, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
}

// munmap removes a mapping made by mmap; b must not be used afterwards.
// Dirty pages stay in the page cache and are written back later.
func (f *file) munmap(b []byte) error {
	f.n.Munmap++
	return unix.Munmap(b)
}

func ignoringEINTR(fn func() error) error {
	for {
		if err := fn(); err != unix.EINTR {
			return err
		}
	}
}
