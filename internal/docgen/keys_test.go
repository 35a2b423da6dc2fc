package docgen

import "testing"

func TestDefaultOf(t *testing.T) {
	cases := []struct{ doc, want string }{
		{"`ratio` is the share of recent calls that may be retries. Default 0.2.", "0.2"},
		{"`listen` is the server's address. Default 127.0.0.1:8470.", "127.0.0.1:8470"},
		{"`total` bounds the whole call. Default: max_attempts x (connect + read).", "max_attempts x (connect + read)"},
		{"`key` is the secret itself. Required.", "required"},
		{"`name` names the key. Required, unique.", "required"},
		{"`dependency` is required for HTTP tools.", ""},
		{"`approval` holds the call for a person's decision instead of refusing.", ""},
	}
	for _, c := range cases {
		if got := defaultOf(c.doc); got != c.want {
			t.Errorf("defaultOf(%q) = %q, want %q", c.doc, got, c.want)
		}
	}
}

// A key of a struct shared by owner and verify that says "(verify)" is
// listed under verify only; every other key is listed under both.
func TestConfigKeysOfTheConfigPackage(t *testing.T) {
	keys, problems, err := ConfigKeys("../../config")
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) > 0 {
		t.Errorf("problems: %v", problems)
	}
	has := map[string]bool{}
	for _, k := range keys {
		has[k.Path] = true
	}
	for path, want := range map[string]bool{
		"tools.<name>.verify.found": true, "tools.<name>.owner.found": false,
		"tools.<name>.owner.expect": true, "tools.<name>.verify.expect": false,
		"tools.<name>.owner.lookup": true, "tools.<name>.verify.lookup": true,
		"auth.keys[].name": true, "dependencies.<name>.breaker.threshold": true,
	} {
		if has[path] != want {
			t.Errorf("key %s listed: %v, want %v", path, has[path], want)
		}
	}
}
