package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/types"
)

// listen serves b's server on 127.0.0.1 until the returned cancel, and
// reports Serve's error on the channel.
func (b *bundle) listen(t *testing.T) (base string, cancel context.CancelFunc, served chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served = make(chan error, 1)
	go func() { served <- b.srv.Serve(ctx, ln) }()
	return "http://" + ln.Addr().String(), cancel, served
}

// logged is closed when the server logs a message starting with prefix.
func (b *bundle) logged(prefix string) <-chan struct{} {
	ch := make(chan struct{})
	var once sync.Once
	b.logs.mu.Lock()
	b.logs.onRecord = func(msg string) {
		if strings.HasPrefix(msg, prefix) {
			once.Do(func() { close(ch) })
		}
	}
	b.logs.mu.Unlock()
	return ch
}

// Calls in flight when the server is told to stop are answered and
// recorded; the server then returns cleanly.
func TestServeDrainsCallsInFlight(t *testing.T) {
	b := setup(t, setupOpts{})
	base, cancel, served := b.listen(t)
	defer cancel()
	id := b.startRun(alphaKey, `{"principal":{"id":"a"}}`)
	down := b.logged("shutting down")

	const n = 8
	type answer struct {
		status int
		res    *types.Result
		err    error
	}
	answers := make(chan answer, n)
	client := &http.Client{}
	for i := range n {
		go func() {
			body := fmt.Sprintf(`{"tool":"hold","args":{"n":%d}}`, i)
			r, _ := http.NewRequest("POST", base+"/v1/runs/"+id+"/calls", strings.NewReader(body))
			r.Header.Set("Authorization", "Bearer "+alphaKey)
			r.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(r)
			if err != nil {
				answers <- answer{err: err}
				return
			}
			defer resp.Body.Close()
			var res types.Result
			if err := json.NewDecoder(resp.Body).Decode(&res); err != nil {
				answers <- answer{status: resp.StatusCode, err: err}
				return
			}
			answers <- answer{status: resp.StatusCode, res: &res}
		}()
	}
	for range n {
		<-b.entered
	}
	if got := b.srv.InFlight(); got != n {
		t.Errorf("InFlight = %d, want %d", got, n)
	}
	cancel()
	<-down
	close(b.release)
	for range n {
		a := <-answers
		if a.err != nil || a.status != 200 || !a.res.OK {
			t.Errorf("call in flight: %d %v %+v", a.status, a.err, a.res)
		}
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	rows, err := b.gw.History(context.Background(), types.ScopedRunID("alpha", id))
	if err != nil || len(rows) != n {
		t.Fatalf("%d rows recorded (%v), want %d", len(rows), err, n)
	}
	client.CloseIdleConnections()
}

// At the shutdown deadline Serve gives up on calls still running and says
// so.
func TestServeShutdownDeadline(t *testing.T) {
	b := setup(t, setupOpts{options: func(o *Options) { o.ShutdownTimeout = time.Millisecond }})
	base, cancel, served := b.listen(t)
	defer cancel()
	id := b.startRun(alphaKey, `{"principal":{"id":"a"}}`)
	done := make(chan struct{})
	go func() {
		defer close(done)
		r, _ := http.NewRequest("POST", base+"/v1/runs/"+id+"/calls", strings.NewReader(`{"tool":"hold"}`))
		r.Header.Set("Authorization", "Bearer "+alphaKey)
		r.Header.Set("Content-Type", "application/json")
		if resp, err := http.DefaultClient.Do(r); err == nil {
			resp.Body.Close()
		}
	}()
	<-b.entered
	recorded := b.logged("call")
	cancel()
	err := <-served
	if err == nil || !strings.Contains(err.Error(), "1 call still running") {
		t.Fatalf("Serve = %v", err)
	}
	close(b.release)
	<-done
	// The call still runs to its end and is recorded.
	<-recorded
	http.DefaultClient.CloseIdleConnections()
}

func TestServeRefusesOpenAddressWithoutKeys(t *testing.T) {
	b := setup(t, setupOpts{noKeys: true})
	tests := []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:8470", true},
		{"[::1]:0", true},
		{"localhost:8470", true},
		{"0.0.0.0:8470", false},
		{":8470", false},
		{"[::]:8470", false},
		{"192.168.1.4:8470", false},
		{"nonsense", false},
	}
	for _, tt := range tests {
		err := b.srv.CheckAddr(tt.addr)
		if (err == nil) != tt.ok {
			t.Errorf("CheckAddr(%s) = %v", tt.addr, err)
		}
		if !tt.ok && tt.addr != "nonsense" && !errors.Is(err, ErrInsecureListen) {
			t.Errorf("CheckAddr(%s) = %v, want ErrInsecureListen", tt.addr, err)
		}
	}
	ln := &fakeListener{addr: &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 8470}}
	if err := b.srv.Serve(context.Background(), ln); !errors.Is(err, ErrInsecureListen) || !ln.closed {
		t.Fatalf("Serve on 10.0.0.1 = %v (closed %v)", err, ln.closed)
	}
	keyed := setup(t, setupOpts{})
	if err := keyed.srv.CheckAddr("0.0.0.0:8470"); err != nil {
		t.Errorf("with keys: %v", err)
	}
}

type fakeListener struct {
	addr   net.Addr
	closed bool
}

func (f *fakeListener) Accept() (net.Conn, error) { return nil, errors.New("fake") }
func (f *fakeListener) Close() error              { f.closed = true; return nil }
func (f *fakeListener) Addr() net.Addr            { return f.addr }

func TestWriteTimeoutCoversTheSlowestCall(t *testing.T) {
	b := setup(t, setupOpts{})
	cfg := b.gw.Config()
	if got, want := b.srv.WriteTimeout(), cfg.Tools["hold"].Timeout.Total.D()+WriteMargin; got < want {
		t.Fatalf("WriteTimeout %s < %s", got, want)
	}
}
