//go:build slow

package gotests

import "testing"

func TestOnlyWithTheSlowTag(t *testing.T) {}
