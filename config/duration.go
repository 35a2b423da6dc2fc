package config

import (
	"encoding/json"
	"fmt"
	"time"
)

// Duration is a time.Duration written as a Go duration string ("500ms").
type Duration time.Duration

// D returns the time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// String formats like time.Duration.
func (d Duration) String() string { return time.Duration(d).String() }

// UnmarshalText parses "1.5s", "500ms", "2m".
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("%q is not a duration (use 500ms, 5s, 2m)", string(b))
	}
	if v < 0 {
		return fmt.Errorf("%q is negative", string(b))
	}
	*d = Duration(v)
	return nil
}

// MarshalText writes the Go duration string.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// MarshalJSON writes the duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalYAML reads a duration string from YAML.
func (d *Duration) UnmarshalYAML(unmarshal func(any) error) error {
	var s string
	if err := unmarshal(&s); err != nil {
		return fmt.Errorf("want a duration string such as 5s")
	}
	return d.UnmarshalText([]byte(s))
}
