package mcpserver

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestInitializeFreesItsReservationWhenAnswered: the place an initialize
// reserves under the key's session cap is given back when its answer
// starts, not when the handler returns, so that a client that opens its
// next session as soon as it has read the answer is not refused with a
// cap it has not reached (the session the initialize made is counted as
// live before the answer is written).
func TestInitializeFreesItsReservationWhenAnswered(t *testing.T) {
	answered, finish := make(chan struct{}), make(chan struct{})
	h := &HTTPHandler{sessions: newSessionCap(1), maxBody: 1 << 20,
		stateful: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusOK)
			close(answered)
			<-finish // the SDK's handler still running after its answer
		})}
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.route(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(initialize)))
	}()
	<-answered
	free := h.sessions.reserve("")
	close(finish)
	<-done
	if !free {
		t.Fatal("the initialize's reservation was still held after its answer was written")
	}
	h.sessions.unreserve("")
	if n := h.sessions.pending[""]; n != 0 {
		t.Fatalf("%d places still reserved once every initialize was answered", n)
	}
}
