package benchhttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// nginxBin is an nginx found on this machine.
type nginxBin struct {
	path    string
	version string // "nginx/1.22.1"
}

// findNginx returns the nginx to run: path when given (an error when it
// does not run), else one from PATH or /usr/sbin; nil when there is none
// or path is "off".
func findNginx(path string) (*nginxBin, error) {
	if path == "off" {
		return nil, nil
	}
	given := path != ""
	if !given {
		for _, p := range []string{"nginx", "/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/local/nginx/sbin/nginx"} {
			if found, err := exec.LookPath(p); err == nil {
				path = found
				break
			}
		}
		if path == "" {
			return nil, nil
		}
	}
	out, err := exec.Command(path, "-v").CombinedOutput()
	if err != nil {
		if given {
			return nil, fmt.Errorf("cannot run nginx %s: %w: %s", path, err, bytes.TrimSpace(out))
		}
		return nil, nil
	}
	v := strings.TrimSpace(string(out))
	v = strings.TrimPrefix(v, "nginx version: ")
	return &nginxBin{path: path, version: v}, nil
}

// nginxConf is a tuned nginx for static files: sendfile and tcp_nopush
// on, no access log, one worker per CPU, keep-alive without a request cap.
// Run by root, its workers run as root too, so they can read the files
// wherever --dir is (nginx's default user, nobody, may not).
const nginxConf = `daemon off;
%[5]s
worker_processes %[1]d;
pid %[2]s/nginx.pid;
error_log %[2]s/error.log warn;
events { worker_connections 4096; }
http {
	access_log off;
	sendfile on;
	tcp_nopush on;
	keepalive_requests 100000000;
	keepalive_timeout 120s;
	client_body_temp_path %[2]s/tmp; proxy_temp_path %[2]s/tmp; fastcgi_temp_path %[2]s/tmp;
	uwsgi_temp_path %[2]s/tmp; scgi_temp_path %[2]s/tmp;
	types { }
	default_type application/octet-stream;
	server {
		listen %[3]s;
		location / { root %[4]s; }
	}
}
`

// nginxRow starts nginx on spec.Dir, measures it and stops it.
func (r *runner) nginxRow(ctx context.Context, ng *nginxBin, row *Row, spec ServerSpec, paths []string, sizes []int64, check func(string, *http.Client) error) error {
	conf, err := os.MkdirTemp("", "spate-bench-nginx-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(conf)
	if err := os.Mkdir(filepath.Join(conf, "tmp"), 0o755); err != nil {
		return err
	}
	addr, err := freePort()
	if err != nil {
		return err
	}
	user := ""
	if os.Geteuid() == 0 {
		user = "user root;"
	}
	text := fmt.Sprintf(nginxConf, runtime.NumCPU(), conf, addr, spec.Dir, user)
	if err := os.WriteFile(filepath.Join(conf, "nginx.conf"), []byte(text), 0o644); err != nil {
		return err
	}
	cmd := exec.Command(ng.path, "-c", filepath.Join(conf, "nginx.conf"), "-p", conf, "-e", filepath.Join(conf, "error.log"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("cannot start nginx: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	}()
	if err := waitListening(addr, exited); err != nil {
		log, _ := os.ReadFile(filepath.Join(conf, "error.log"))
		return fmt.Errorf("nginx did not start: %w: %s%s", err, bytes.TrimSpace(stderr.Bytes()), bytes.TrimSpace(log))
	}
	master := cmd.Process.Pid
	return r.measure(ctx, row, addr, "/", []int{master}, func() []int { return children(master) }, paths, sizes, check)
}

// waitListening waits up to 10 s for addr to accept connections.
func waitListening(addr string, exited <-chan error) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case err := <-exited:
			if err == nil {
				err = errors.New("exited")
			}
			return err
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nothing listens on %s after 10s", addr)
		}
	}
}
