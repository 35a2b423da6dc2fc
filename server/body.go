package server

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/toolgate/toolgate/types"
)

// readBody checks the content type and reads the body within the size
// limit; Serve's read deadline bounds the time.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, *apiError) {
	if e := checkContentType(r.Header.Get("Content-Type")); e != nil {
		return nil, e
	}
	if r.ContentLength > s.maxBody {
		return nil, tooLarge(s.maxBody)
	}
	// The request's read deadline (BodyReadTimeout) holds until the body's
	// end; bodyDeadline lifts it there, and only there.
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.maxBody))
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return nil, tooLarge(s.maxBody)
		}
		return nil, badRequest("the request body could not be read (%v)", err)
	}
	return body, nil
}

func tooLarge(limit int64) *apiError {
	return &apiError{status: http.StatusRequestEntityTooLarge, code: types.CodeBodyTooLarge,
		message: fmt.Sprintf("the request body is larger than the limit of %d bytes (max_body_bytes)", limit)}
}

// checkContentType requires application/json; parameters such as charset
// are allowed.
func checkContentType(ct string) *apiError {
	unsupported := func(why string) *apiError {
		return &apiError{status: http.StatusUnsupportedMediaType, code: types.CodeUnsupportedType, message: why}
	}
	if ct == "" {
		return unsupported("the request has no Content-Type; send JSON with Content-Type: application/json")
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return unsupported(fmt.Sprintf("the Content-Type %q cannot be parsed; send Content-Type: application/json", clip(ct)))
	}
	if mt != "application/json" {
		return unsupported(fmt.Sprintf("the Content-Type is %q; toolgate only reads application/json", clip(mt)))
	}
	return nil
}
