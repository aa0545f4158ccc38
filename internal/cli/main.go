package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// Main runs spate as a program with args (without the program name) and
// returns its exit code. SIGINT and SIGTERM cancel the command's context,
// and a second signal kills the process (the default action again). A
// command blocked where it cannot see the signal (reading a terminal or a
// silent pipe) gets InterruptGrace to return; then Main returns
// ExitInterrupted without it.
func Main(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	done := make(chan int, 1)
	go func() { done <- Run(ctx, args, os.Stdout, os.Stderr) }()
	select {
	case code := <-done:
		return code
	case <-ctx.Done():
	}
	stop()
	var timeout <-chan time.Time
	if grace := InterruptGrace(args); grace > 0 {
		timeout = time.After(grace)
	}
	select {
	case code := <-done:
		return code
	case <-timeout:
		fmt.Fprintln(os.Stderr, "spate: interrupted")
		return ExitInterrupted
	}
}

// InterruptGrace is how long after a signal Main waits for the command
// given by args to return; 0 means as long as it takes (spate serve,
// which drains its requests and syncs; acknowledged lines are on disk
// already).
func InterruptGrace(args []string) time.Duration {
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			if a == "serve" {
				return 0
			}
			break
		}
	}
	return time.Second
}
