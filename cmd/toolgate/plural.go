package main

import "fmt"

// count is n and its noun, singular for 1: "1 dependency", "2
// dependencies", "0 calls".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
