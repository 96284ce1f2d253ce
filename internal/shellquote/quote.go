// Package shellquote writes argv as a POSIX shell command line that a shell
// splits back into exactly the same words.
package shellquote

import "strings"

// safe reports whether a word needs no quoting: it holds only characters
// that no POSIX shell treats specially in any position.
func safe(w string) bool {
	if w == "" {
		return false
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("@%+=:,./_-", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// Quote returns w as one shell word. Unsafe words are wrapped in single
// quotes, inside which a shell interprets nothing; a single quote itself is
// written as '\” (close, escaped quote, reopen).
func Quote(w string) string {
	if safe(w) {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// Join quotes each word and joins them with spaces. The first word is the
// command, where a shell reads NAME=value as an assignment and words such
// as `if` as syntax: there those are quoted too.
func Join(argv []string) string {
	var b strings.Builder
	for i, w := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		if i == 0 && (reservedWords[w] || strings.Contains(w, "=")) {
			b.WriteString("'" + strings.ReplaceAll(w, "'", `'\''`) + "'")
			continue
		}
		b.WriteString(Quote(w))
	}
	return b.String()
}

// reservedWords are read as syntax in command position (POSIX, plus the
// ones bash adds).
var reservedWords = map[string]bool{
	"!": true, "{": true, "}": true, "case": true, "do": true, "done": true,
	"elif": true, "else": true, "esac": true, "fi": true, "for": true, "if": true,
	"in": true, "then": true, "until": true, "while": true,
	"[[": true, "]]": true, "function": true, "select": true, "time": true, "coproc": true,
}
