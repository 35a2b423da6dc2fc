package expr

import "strings"

// Suggest returns the candidate closest to name when it is close enough to
// be a likely typo ("amount" for "amount_paise", "get_ordr" for
// "get_order"), else "".
func Suggest(name string, candidates []string) string {
	best, bestDist := "", -1
	lower := strings.ToLower(name)
	for _, c := range candidates {
		lc := strings.ToLower(c)
		d := Distance(lower, lc)
		if len(lower) >= 3 && (strings.Contains(lc, lower) || strings.Contains(lower, lc)) {
			d = min(d, 1)
		}
		if bestDist < 0 || d < bestDist {
			best, bestDist = c, d
		}
	}
	limit := max(2, len(name)/3)
	if bestDist < 0 || bestDist > limit {
		return ""
	}
	return best
}

// Distance is the Levenshtein distance between a and b, in bytes (strings
// over 64 bytes are either equal or as far apart as the longer is long).
func Distance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		if a == b {
			return 0
		}
		return max(len(a), len(b))
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
