package faultproxy

import (
	"net"
	"sync"
	"time"
)

// link is one proxied connection: the client's and the upstream's.
type link struct {
	p          *Proxy
	client, up net.Conn
	once       sync.Once
	done       chan struct{} // closed when the link closes

	mu    sync.Mutex
	gen   int // the fault generation sent counts from
	sent  int // answer bytes sent under a truncate
	pumps int // pumps ended
}

// close closes both connections, resetting them (RST, unsent bytes
// dropped) when rst is set.
func (l *link) close(rst bool) {
	l.once.Do(func() {
		if rst {
			for _, c := range []net.Conn{l.client, l.up} {
				if tc, ok := c.(*net.TCPConn); ok {
					_ = tc.SetLinger(0)
				}
			}
		}
		l.client.Close()
		l.up.Close()
		close(l.done)
	})
}

// pump copies src to dst chunk by chunk, applying the fault on at each
// chunk; toUp is the request direction (client to upstream).
func (l *link) pump(src, dst net.Conn, toUp bool) {
	defer l.ended()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !l.deliver(dst, buf[:n], toUp) {
			l.close(false)
			return
		}
		if err != nil {
			l.close(false)
			return
		}
	}
}

// ended counts a pump out; the second one takes the link off the proxy.
func (l *link) ended() {
	l.mu.Lock()
	l.pumps++
	last := l.pumps == 2
	l.mu.Unlock()
	if last {
		l.p.mu.Lock()
		delete(l.p.conns, l)
		l.p.mu.Unlock()
	}
	l.p.wg.Done()
}

// deliver passes one chunk under the fault on now; false means the link
// is done.
func (l *link) deliver(dst net.Conn, b []byte, toUp bool) bool {
	f, changed := l.p.current()
	switch {
	case toUp && f.dropUp, !toUp && f.dropDn:
		return true // dropped on the floor
	case toUp:
		return write(dst, b)
	case f.reset:
		l.close(true)
		return false
	case f.latency > 0:
		if !l.wait(f.latency, changed, true) {
			return false
		}
	case f.trickle > 0:
		return l.trickle(dst, b, f.trickle)
	case f.limited:
		return l.truncate(dst, b, f)
	}
	return write(dst, b)
}

func write(dst net.Conn, b []byte) bool {
	_, err := dst.Write(b)
	return err == nil
}

// wait waits d, or until the link closes; a fault change ends the wait
// early when early is set (a healed latency lets what it held go).
func (l *link) wait(d time.Duration, changed <-chan struct{}, early bool) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	if !early {
		changed = nil
	}
	select {
	case <-t.C:
		return true
	case <-changed:
		return true
	case <-l.done:
		return false
	}
}

// trickle writes b in pieces of a tenth of the rate, one every 100 ms.
func (l *link) trickle(dst net.Conn, b []byte, rate int) bool {
	piece := max(1, rate/10)
	delay := time.Duration(piece) * time.Second / time.Duration(rate)
	for len(b) > 0 {
		n := min(piece, len(b))
		if !write(dst, b[:n]) {
			return false
		}
		b = b[n:]
		if len(b) > 0 && !l.wait(delay, nil, false) {
			return false
		}
	}
	return true
}

// truncate writes what is left of the fault's byte allowance of b, and
// ends the link once the allowance is spent.
func (l *link) truncate(dst net.Conn, b []byte, f fault) bool {
	l.mu.Lock()
	if l.gen != f.gen {
		l.gen, l.sent = f.gen, 0
	}
	left := f.limit - l.sent
	n := min(max(left, 0), len(b))
	l.sent += n
	l.mu.Unlock()
	if n > 0 && !write(dst, b[:n]) {
		return false
	}
	return n == len(b) && n < left
}
