package server

import (
	"context"
	"errors"
	"io"
	"net/http"
	"syscall"

	"github.com/tus/tusd/v2/pkg/filestore"
	tusd "github.com/tus/tusd/v2/pkg/handler"
)

// spaceStore is tusd's file store with a full disk answered 507
// Insufficient Storage instead of 500. What was written before the disk
// filled stays (the upload's offset says how much), nothing past it is
// kept, and an upload is finished, and shown at /files/, only when all of
// it is stored: the client resumes once space is freed.
type spaceStore struct{ fs filestore.FileStore }

func (s spaceStore) useIn(c *tusd.StoreComposer) {
	c.UseCore(s)
	c.UseTerminater(s)
	c.UseLengthDeferrer(s)
}

func (s spaceStore) NewUpload(ctx context.Context, info tusd.FileInfo) (tusd.Upload, error) {
	u, err := s.fs.NewUpload(ctx, info)
	if err != nil {
		return nil, noSpace(err)
	}
	return spaceUpload{u}, nil
}

func (s spaceStore) GetUpload(ctx context.Context, id string) (tusd.Upload, error) {
	u, err := s.fs.GetUpload(ctx, id)
	if err != nil {
		return nil, err
	}
	return spaceUpload{u}, nil
}

func (s spaceStore) AsTerminatableUpload(u tusd.Upload) tusd.TerminatableUpload {
	return s.fs.AsTerminatableUpload(u.(spaceUpload).Upload)
}

func (s spaceStore) AsLengthDeclarableUpload(u tusd.Upload) tusd.LengthDeclarableUpload {
	return s.fs.AsLengthDeclarableUpload(u.(spaceUpload).Upload)
}

// spaceUpload is an upload of spaceStore.
type spaceUpload struct{ tusd.Upload }

func (u spaceUpload) WriteChunk(ctx context.Context, offset int64, src io.Reader) (int64, error) {
	n, err := u.Upload.WriteChunk(ctx, offset, src)
	return n, noSpace(err)
}

// errNoSpace is the answer to a write that found the disk full.
var errNoSpace = tusd.NewError("ERR_INSUFFICIENT_STORAGE",
	"no space left on the uploads disk: the bytes before Upload-Offset are stored, nothing after; resume when space is freed",
	http.StatusInsufficientStorage)

// noSpace turns a full disk (or quota) into errNoSpace.
func noSpace(err error) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return errNoSpace
	}
	return err
}
