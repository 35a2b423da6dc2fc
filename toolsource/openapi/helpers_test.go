package openapi

import (
	"os"
	"strings"
)

func writeFile(path, body string) error { return os.WriteFile(path, []byte(body), 0o600) }

func contains(s, sub string) bool { return strings.Contains(s, sub) }
