package execute

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http/httptrace"
	"os"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
)

// hangingAddr returns an address on 127.0.0.1 where a connect neither
// completes nor is refused: a listening socket with backlog 0 that never
// accepts, its accept queue already full.
//
// Linux drops a SYN when the listener's accept queue is full (before any
// SYN-cookie logic), so the client keeps retransmitting its SYN until its own
// timeout. With backlog 0 the queue holds one connection; hangingAddr fills
// it, then probes until a connect times out, which proves the next one hangs.
func hangingAddr(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	listener := os.NewFile(uintptr(fd), "hanging-listener")
	t.Cleanup(func() { listener.Close() })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)

	for range 8 {
		conn, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			t.Cleanup(func() { conn.Close() }) // it fills the accept queue
			continue
		}
		if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
			return addr // the queue is full: connects now hang
		}
		t.Fatalf("probing %s: %v (want a hanging connect)", addr, err)
	}
	t.Fatalf("connects to %s keep completing; cannot produce a connect timeout here", addr)
	return ""
}

func TestConnectTimeout(t *testing.T) {
	addr := hangingAddr(t)
	h := NewHTTP(HTTPOptions{})
	defer h.Close()

	tests := []struct {
		name   string
		scheme string
	}{
		{"tcp", "http"},
		{"tcp before TLS", "https"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := httpAttempt(tt.scheme+"://"+addr, "POST", "/refunds", map[string]any{"amount_paise": num("425000")})
			a.Tool.Timeout = config.Timeout{Connect: config.Duration(200 * time.Millisecond)}
			_, failure := h.Do(context.Background(), a)
			assertFailure(t, failure, Failure{
				Kind: KindConnectTimeout, Delivered: false, Transient: true, Code: types.CodeConnectTimeout,
				Message: "no connection to " + addr + " within 200ms",
			})
		})
	}

	t.Run("caller cancels while connecting", func(t *testing.T) {
		connecting := make(chan struct{})
		ctx, cancel := context.WithCancel(httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
			ConnectStart: func(string, string) { close(connecting) },
		}))
		defer cancel()
		a := httpAttempt("http://"+addr, "POST", "/refunds", nil)
		a.Tool.Timeout = config.Timeout{Connect: config.Duration(time.Hour)}
		done := make(chan *Failure)
		go func() {
			_, failure := h.Do(ctx, a)
			done <- failure
		}()
		<-connecting
		cancel()
		failure := <-done
		if failure == nil || failure.Kind != KindCanceled || failure.Delivered || failure.Transient {
			t.Fatalf("failure = %+v, want canceled, not delivered", failure)
		}
		// The hour-long dial ended with the attempt, not at h.Close.
		goleak.VerifyNone(t)
	})
}
