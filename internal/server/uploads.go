package server

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tus/tusd/v2/pkg/filelocker"
	"github.com/tus/tusd/v2/pkg/filestore"
	tusd "github.com/tus/tusd/v2/pkg/handler"
	xslog "golang.org/x/exp/slog"
)

// Resumable uploads at /uploads/: the tus protocol (tusd v2 as a
// library), with its file store in FilesDir/.uploads (a dotfile directory:
// never served). A finished upload is renamed to FilesDir/NAME, NAME being
// its Upload-Metadata filename without any path (or its upload ID), so
// that /files/NAME serves it; an existing file is replaced only with
// UploadsOverwrite (else 409, at creation and again at the end).

// uploadsDir is the tus store's directory under FilesDir.
const uploadsDir = ".uploads"

func (s *Server) newUploads() (http.Handler, error) {
	store := filepath.Join(s.cfg.FilesDir, uploadsDir)
	if err := os.MkdirAll(store, 0o755); err != nil {
		return nil, fmt.Errorf("cannot make the uploads directory: %w", err)
	}
	composer := tusd.NewStoreComposer()
	spaceStore{filestore.New(store)}.useIn(composer)
	filelocker.New(store).UseIn(composer)
	h, err := tusd.NewHandler(tusd.Config{
		BasePath:      "/uploads/",
		StoreComposer: composer,
		MaxSize:       s.cfg.UploadsMaxSize,
		// Concatenation is off: a finished partial upload would be moved
		// to the files directory like any other.
		DisableConcatenation: true,
		// tusd logs every request through x/exp/slog; spate logs what
		// matters (finished uploads) itself.
		Logger: xslog.New(xslog.NewTextHandler(io.Discard, nil)),
		PreUploadCreateCallback: func(hook tusd.HookEvent) (tusd.HTTPResponse, tusd.FileInfoChanges, error) {
			name := uploadName(hook.Upload)
			if name == "" {
				return tusd.HTTPResponse{}, tusd.FileInfoChanges{}, nil // named after its ID at the end
			}
			if err := s.checkTarget(name); err != nil {
				return tusd.HTTPResponse{}, tusd.FileInfoChanges{}, err
			}
			return tusd.HTTPResponse{}, tusd.FileInfoChanges{}, nil
		},
		PreFinishResponseCallback: func(hook tusd.HookEvent) (tusd.HTTPResponse, error) {
			return tusd.HTTPResponse{}, s.finishUpload(hook.Upload)
		},
	})
	if err != nil {
		return nil, fmt.Errorf("cannot start the uploads handler: %w", err)
	}
	var th http.Handler = h
	if s.cfg.UploadsExpire > 0 {
		e := &expiry{dir: store, ttl: s.cfg.UploadsExpire, log: s.log, now: time.Now,
			busy: map[string]int{}, onExpire: s.m.uploadsExpired.Inc}
		th = e.wrap(th)
		go e.run(s.done)
	}
	return checksums(http.StripPrefix("/uploads/", th), s.cfg.UploadsExpire > 0), nil
}

// uploadName is the sanitised filename an upload's metadata gives: its
// last path element, without control characters, not a dotfile; "" if
// none is usable.
func uploadName(info tusd.FileInfo) string {
	name := info.MetaData["filename"]
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	if !utf8.ValidString(name) || strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return ""
	}
	name = strings.TrimSpace(name)
	if name == "" || name[0] == '.' || len(name) > 255 {
		return ""
	}
	return name
}

// checkTarget refuses a name whose file exists, unless overwriting.
func (s *Server) checkTarget(name string) error {
	if s.cfg.UploadsOverwrite {
		return nil
	}
	if _, err := os.Lstat(filepath.Join(s.cfg.FilesDir, name)); err == nil {
		return tusd.NewError("ERR_FILE_EXISTS", fmt.Sprintf("%s exists (spate serve --uploads-overwrite replaces files)", name), http.StatusConflict)
	}
	return nil
}

// finishUpload moves a finished upload to FilesDir/NAME and drops its tus
// bookkeeping.
func (s *Server) finishUpload(info tusd.FileInfo) error {
	name := uploadName(info)
	if name == "" {
		name = info.ID
	}
	if err := s.checkTarget(name); err != nil {
		return err
	}
	src := info.Storage["Path"]
	if src == "" {
		return errors.New("the finished upload has no path")
	}
	if err := os.Rename(src, filepath.Join(s.cfg.FilesDir, name)); err != nil {
		return fmt.Errorf("cannot store the finished upload: %w", err)
	}
	if p := info.Storage["InfoPath"]; p != "" {
		os.Remove(p)
	}
	s.m.uploadsFinished.Inc()
	s.m.uploadsBytes.Add(float64(info.Size))
	s.log.Info("upload finished", "name", name, "bytes", info.Size)
	return nil
}
