package memory

import (
	"bytes"
	"encoding/json"

	"github.com/toolgate/toolgate/types"
)

// copyRun returns a deep copy of r: its JSON and its principal share nothing
// with r.
func copyRun(r *types.Run) *types.Run {
	c := *r
	c.Principal = r.Principal.Clone()
	c.State = cloneJSON(r.State)
	c.InitialState = cloneJSON(r.InitialState)
	return &c
}

// copyOperation returns a copy of op with its result copied.
func copyOperation(op *types.Operation) *types.Operation {
	c := *op
	c.Result = cloneJSON(op.Result)
	c.Args = cloneJSON(op.Args)
	return &c
}

// cloneJSON copies raw JSON; nil stays nil.
func cloneJSON(raw json.RawMessage) json.RawMessage {
	if raw == nil {
		return nil
	}
	return json.RawMessage(bytes.Clone(raw))
}

// packer copies several raw JSON values into one allocation, so that a
// Commit costs one allocation for the JSON it keeps outside the log. The copies share a backing
// array but never overlap, and the store never writes to them.
type packer struct{ buf []byte }

// newPacker returns a packer with room for values of total size n.
func newPacker(n int) packer { return packer{buf: make([]byte, 0, n)} }

// copy returns a copy of raw inside the packer's buffer; nil stays nil.
func (p *packer) copy(raw json.RawMessage) json.RawMessage {
	if raw == nil {
		return nil
	}
	start := len(p.buf)
	p.buf = append(p.buf, raw...)
	return json.RawMessage(p.buf[start:len(p.buf):len(p.buf)])
}
