package server

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// failAfter bounds how long a test waits for the server to act; reaching
// it is the failure, never the synchronisation.
const failAfter = 20 * time.Second

// slowBody opens a connection that sends a request whose body promises
// 200,000 bytes and sends 10, and returns it.
func slowBody(t *testing.T, addr, path string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 200000\r\n\r\n{\"a\": 123", path, addr, alphaKey)
	return c
}

// closedByServer reads c until the server closes it (or failAfter).
func closedByServer(t *testing.T, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(failAfter))
	if _, err := io.Copy(io.Discard, c); err != nil {
		t.Fatalf("the server kept the slow connection open: %v", err)
	}
}

// TestSlowBodyCut: a body sent too slowly is cut at the read timeout and
// its connection closed, whether the route reads the body (a call), or
// refuses it unread (no key), and the drain of the rest is bounded too;
// a call that runs past the read timeout once its body was read is not
// cut.
func TestSlowBodyCut(t *testing.T) {
	b := setup(t, setupOpts{options: func(o *Options) { o.ReadTimeout = 300 * time.Millisecond }})
	base, cancel, _ := b.listen(t)
	defer cancel()
	addr := strings.TrimPrefix(base, "http://")
	id := b.startRun(alphaKey, `{"principal":{"id":"a"}}`)

	answered := make(chan *http.Response, 1)
	go func() {
		req, _ := http.NewRequest("POST", base+"/v1/runs/"+id+"/calls", strings.NewReader(`{"tool":"hold","args":{"n":1}}`))
		req.Header.Set("Authorization", "Bearer "+alphaKey)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
		}
		answered <- res
	}()
	<-b.entered // the call runs; its body was read

	for _, path := range []string{"/v1/runs", "/v1/runs/" + id + "/calls", "/v1/nothing"} {
		closedByServer(t, slowBody(t, addr, path))
	}
	noKey, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer noKey.Close()
	fmt.Fprintf(noKey, "POST /v1/runs HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 200000\r\n\r\n{", addr)
	closedByServer(t, noKey)

	close(b.release) // the slow connections outlived the read timeout; the call did too
	res := <-answered
	if res == nil {
		t.Fatal("no answer")
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(res.Body)
		t.Fatalf("the held call: %d %s", res.StatusCode, body)
	}
}

// TestConnectionsPerClient: one client address holds at most
// MaxConnsPerClient connections; one more is closed at once, and the
// others still work.
func TestConnectionsPerClient(t *testing.T) {
	b := setup(t, setupOpts{options: func(o *Options) { o.MaxConnsPerClient = 2 }})
	base, cancel, _ := b.listen(t)
	defer cancel()
	addr := strings.TrimPrefix(base, "http://")
	refused := b.logged("connection refused")
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		held = append(held, c)
	}
	// The listener takes connections in order: once the third is refused,
	// the two before it hold their places.
	third, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	closedByServer(t, third)
	select {
	case <-refused:
	case <-time.After(failAfter):
		t.Fatal("no warning for the refused connection")
	}
	for _, c := range held {
		fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
}
