// Package accesslog is the access log of `toolgate serve`: the line the
// pipeline writes for every call, kept out of the operator's log and
// written through a buffer, so a call costs no write of its own.
//
// A Log buffers what is written to it and flushes it on a short interval
// (FlushInterval) and when it is closed, so no line is held longer than the
// interval and none is lost at a graceful shutdown. Split routes the
// per-call records (message CallMessage) of one slog logger to the access
// log's handler, and everything else, failures included, to the normal one.
package accesslog
