package stageconfig

import (
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// vllm-omni reads its configs with OmegaConf.load, whose loader is PyYAML's
// SafeLoader (YAML 1.1) with one more float rule and without timestamps
// (omegaconf/_utils.py get_yaml_loader, OmegaConf 2.2). yaml.v3 follows YAML
// 1.2, and the two read some plain scalars differently: `yes` is a boolean
// there and a string here, `1:30` the integer 90 there, `0o7` an integer
// here and a string there. The planner reads every value through pyRead, so
// that it plans with what vllm-omni will see, and writes strings and keys so
// that both read them back as the same string.

// pyKind is the type vllm-omni's loader gives a scalar.
type pyKind int

const (
	pyStr pyKind = iota
	pyInt
	pyFloat
	pyBool
	pyNull
	// pyMerge is the merge key `<<`, only meaningful as a mapping key.
	pyMerge
	// pyValue is a bare `=`: PyYAML has no constructor for it as a value,
	// and reads it as the string "=" as a key.
	pyValue
	// pyInvalid is a scalar the loader fails on; pyScalar.Err says why.
	pyInvalid
)

// pyScalar is a scalar as vllm-omni's loader constructs it.
type pyScalar struct {
	Kind  pyKind
	Text  string   // the scalar's text as written (after YAML folding)
	Int   *big.Int // pyInt: Python's ints have no size limit
	Float float64  // pyFloat
	Bool  bool     // pyBool
	Err   string   // pyInvalid
}

// The implicit resolvers of the loader, each with the first characters it
// is tried for, in the order PyYAML tries them (resolver.py of PyYAML 6.0,
// then the float rule OmegaConf appends; OmegaConf drops the timestamp
// rule). Python's `$` also matches before a final newline, which a plain
// scalar cannot end with.
var (
	pyFloatRE = regexp.MustCompile(`^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?` +
		`|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?` +
		`|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*` +
		`|[-+]?\.(?:inf|Inf|INF)` +
		`|\.(?:nan|NaN|NAN))$`)
	pyIntRE = regexp.MustCompile(`^(?:[-+]?0b[0-1_]+` +
		`|[-+]?0[0-7_]+` +
		`|[-+]?(?:0|[1-9][0-9_]*)` +
		`|[-+]?0x[0-9a-fA-F_]+` +
		`|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$`)
	pyNullRE       = regexp.MustCompile(`^(?:~|null|Null|NULL|)$`)
	omegaconfFloat = regexp.MustCompile(`^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?` +
		`|[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)` +
		`|\.[0-9_]+(?:[eE][-+][0-9]+)?` +
		`|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*` +
		`|[-+]?\.(?:inf|Inf|INF)` +
		`|\.(?:nan|NaN|NAN))$`)
)

// isPlainFloat reports whether s is digits, a dot and digits (0.9, 1.,
// 32.50): a float to the loader, the first form pyFloatRE matches.
func isPlainFloat(s string) bool {
	dot := strings.IndexByte(s, '.')
	if dot < 1 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if i != dot && (s[i] < '0' || s[i] > '9') {
			return false
		}
	}
	return true
}

// pyPlainKind is the kind the loader resolves a plain (unquoted, untagged)
// scalar with this text to.
func pyPlainKind(s string) pyKind {
	if s == "" {
		return pyNull
	}
	if isDecimal(s) {
		return pyInt // the common case, without the regexps
	}
	c := s[0]
	if yaml11Bools[s] {
		return pyBool
	}
	number := strings.IndexByte("-+0123456789.", c) >= 0
	if number && isPlainFloat(s) {
		return pyFloat // such as 0.9, without the regexps
	}
	if number && pyFloatRE.MatchString(s) {
		return pyFloat
	}
	if number && c != '.' && pyIntRE.MatchString(s) {
		return pyInt
	}
	switch {
	case s == "<<":
		return pyMerge
	// The nulls are at most 4 characters: longer texts skip the regexp.
	case len(s) <= 4 && strings.IndexByte("~nN", c) >= 0 && pyNullRE.MatchString(s):
		return pyNull
	case s == "=":
		return pyValue
	}
	if number && omegaconfFloat.MatchString(s) {
		return pyFloat
	}
	return pyStr
}

// isDecimal reports whether s is 0 or a decimal number without a leading
// zero, sign or underscore, which every YAML reader reads as that integer.
func isDecimal(s string) bool {
	_, ok := plainDecimal(s)
	return ok
}

// pyRead reads a scalar node as vllm-omni's loader does. Other nodes read
// as invalid.
func pyRead(n *yaml.Node) pyScalar {
	if n == nil || n.Kind != yaml.ScalarNode {
		return pyScalar{Kind: pyInvalid, Err: "not a scalar"}
	}
	if n.Style&yaml.TaggedStyle != 0 {
		return pyTagged(n)
	}
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return pyScalar{Kind: pyStr, Text: n.Value}
	}
	return pyConstruct(pyPlainKind(n.Value), n.Value)
}

// pyTagged reads a scalar written with an explicit tag. Only the core tags
// whose meaning both readers share are read; a tag that would change how a
// plain scalar reads (`!!int 0o7`, which PyYAML reads as 7 and no YAML 1.1
// implicit rule does) is refused rather than guessed at.
func pyTagged(n *yaml.Node) pyScalar {
	tag := shortTagName(n.Tag)
	s := n.Value
	switch tag {
	case tagStr:
		return pyScalar{Kind: pyStr, Text: s}
	case tagNull:
		return pyScalar{Kind: pyNull, Text: s}
	case tagBool:
		if _, ok := pyBoolWords[strings.ToLower(s)]; ok {
			return pyConstruct(pyBool, s)
		}
	case tagInt:
		if pyIntRE.MatchString(s) {
			return pyConstruct(pyInt, s)
		}
	case tagFloat:
		if pyIntRE.MatchString(s) || pyFloatRE.MatchString(s) || omegaconfFloat.MatchString(s) {
			return pyConstruct(pyFloat, s)
		}
	case "!!merge":
		return pyScalar{Kind: pyMerge, Text: s}
	default:
		return pyScalar{Kind: pyInvalid, Text: s, Err: unsafeTagMessage(tag)}
	}
	return pyScalar{Kind: pyInvalid, Text: s, Err: fmt.Sprintf("%s %q is not a value vllm-omni's YAML loader reads as %s: remove the tag and write the value plainly", tag, s, tag)}
}

// shortTagName spells a tag of the YAML core schema as !!name.
func shortTagName(tag string) string {
	if rest, ok := strings.CutPrefix(tag, "tag:yaml.org,2002:"); ok {
		return "!!" + rest
	}
	return tag
}

// unsafeTagMessage explains why a tag is refused.
func unsafeTagMessage(tag string) string {
	if strings.HasPrefix(tag, "!!python/") {
		return fmt.Sprintf("the tag %s asks for a Python object; vllm-omni's loader is a safe loader and refuses it (and a config must not run code): write the value out", tag)
	}
	return fmt.Sprintf("the tag %s is not supported in a stage config (vllm-omni's loader refuses most tags, and reads the rest into values a config cannot hold): remove it and write a plain value, list or mapping", tag)
}

// pyBoolWords are YAML 1.1's boolean words, in lower case, and their values.
var pyBoolWords = map[string]bool{"yes": true, "no": false, "true": true, "false": false, "on": true, "off": false}

// yaml11Bools are the spellings the loader reads as booleans: each of
// pyBoolWords in lower case, capitalised or upper case (PyYAML's bool
// resolver), and yaml11Words those and the spellings of null, which no key
// or name can be without quotes.
var yaml11Bools, yaml11Words = func() (bools, words map[string]bool) {
	bools, words = map[string]bool{}, map[string]bool{"null": true, "Null": true, "NULL": true}
	for w := range pyBoolWords {
		for _, spelling := range []string{w, strings.ToUpper(w[:1]) + w[1:], strings.ToUpper(w)} {
			bools[spelling], words[spelling] = true, true
		}
	}
	return bools, words
}()

// pyConstruct builds the value of a scalar of a known kind, as PyYAML's
// SafeConstructor does, or says why it fails.
func pyConstruct(kind pyKind, s string) pyScalar {
	out := pyScalar{Kind: kind, Text: s}
	switch kind {
	case pyBool:
		out.Bool = pyBoolWords[strings.ToLower(s)]
	case pyInt:
		v, ok := pyParseInt(s)
		if !ok {
			return pyScalar{Kind: pyInvalid, Text: s, Err: fmt.Sprintf("%q looks like a number to vllm-omni's YAML loader, which then fails to read it: quote it or write the number out", s)}
		}
		out.Int = v
	case pyFloat:
		v, ok := pyParseFloat(s)
		if !ok {
			return pyScalar{Kind: pyInvalid, Text: s, Err: fmt.Sprintf("%q looks like a number to vllm-omni's YAML loader, which then fails to read it: quote it or write the number out", s)}
		}
		out.Float = v
	}
	return out
}

// asInt is the integer as a Go int; ok is false for any other kind, and
// for an integer too large for an int.
func (r pyScalar) asInt() (int, bool) {
	if r.Kind != pyInt || !r.Int.IsInt64() || r.Int.Int64() != int64(int(r.Int.Int64())) {
		return 0, false
	}
	return int(r.Int.Int64()), true
}

// pyParseInt is SafeConstructor.construct_yaml_int.
func pyParseInt(s string) (*big.Int, bool) {
	if n, ok := plainDecimal(s); ok {
		return big.NewInt(n), true
	}
	s = strings.ReplaceAll(s, "_", "")
	if s == "" {
		return nil, false
	}
	neg := s[0] == '-'
	if s[0] == '-' || s[0] == '+' {
		s = s[1:]
	}
	v := new(big.Int)
	var ok bool
	switch {
	case s == "0":
		ok = true
	case strings.HasPrefix(s, "0b"):
		_, ok = v.SetString(s[2:], 2)
	case strings.HasPrefix(s, "0x"):
		_, ok = v.SetString(s[2:], 16)
	case strings.HasPrefix(s, "0"):
		_, ok = v.SetString(s, 8)
	case strings.Contains(s, ":"):
		ok = true
		for _, part := range strings.Split(s, ":") {
			d, good := new(big.Int).SetString(part, 10)
			if !good {
				return nil, false
			}
			v.Mul(v, big.NewInt(60)).Add(v, d)
		}
	default:
		_, ok = v.SetString(s, 10)
	}
	if !ok {
		return nil, false
	}
	if neg {
		v.Neg(v)
	}
	return v, true
}

// pyParseFloat is SafeConstructor.construct_yaml_float. Python's float()
// gives ±inf for a number too large, as ParseFloat does with ErrRange.
func pyParseFloat(s string) (float64, bool) {
	s = strings.ToLower(strings.ReplaceAll(s, "_", ""))
	if s == "" {
		return 0, false
	}
	sign := 1.0
	if s[0] == '-' {
		sign = -1
	}
	if s[0] == '-' || s[0] == '+' {
		s = s[1:]
	}
	switch {
	case s == ".inf":
		return sign * math.Inf(1), true
	case s == ".nan":
		return math.NaN(), true
	case strings.Contains(s, ":"):
		v := 0.0
		for _, part := range strings.Split(s, ":") {
			d, ok := parsePyFloat(part)
			if !ok {
				return 0, false
			}
			v = v*60 + d
		}
		return sign * v, true
	}
	v, ok := parsePyFloat(s)
	return sign * v, ok
}

// parsePyFloat is Python's float() on the unsigned decimal forms the float
// rules let through.
func parsePyFloat(s string) (float64, bool) {
	if s == "" || s == "." || strings.ContainsAny(s, "xXpP") {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return v, true
		}
		return 0, false
	}
	return v, true
}

// pyKeyIdentity is what makes two mapping keys the same key in the Python
// dict vllm-omni reads: equal strings, or equal numbers (True == 1 == 1.0).
// ok is false for a key that is never equal to another (NaN).
func pyKeyIdentity(r pyScalar) (string, bool) {
	switch r.Kind {
	case pyStr, pyValue:
		return "s\x00" + r.Text, true
	case pyBool:
		if r.Bool {
			return "n\x001", true
		}
		return "n\x000", true
	case pyInt:
		return "n\x00" + r.Int.String(), true
	case pyFloat:
		switch {
		case math.IsNaN(r.Float):
			return "", false
		case math.IsInf(r.Float, 0):
			return "f\x00" + strconv.FormatFloat(r.Float, 'g', -1, 64), true
		case r.Float == math.Trunc(r.Float):
			i, _ := big.NewFloat(r.Float).Int(nil)
			return "n\x00" + i.String(), true
		}
		return "f\x00" + strconv.FormatFloat(r.Float, 'g', -1, 64), true
	}
	return "", false
}

// pyDescribe says in a few words what the loader reads a scalar as.
func pyDescribe(r pyScalar) string {
	switch r.Kind {
	case pyStr:
		return fmt.Sprintf("the text %q", r.Text)
	case pyInt:
		return "the integer " + r.Int.String()
	case pyFloat:
		return "the number " + strconv.FormatFloat(r.Float, 'g', -1, 64)
	case pyBool:
		return fmt.Sprintf("the boolean %t", r.Bool)
	case pyNull:
		return "null (no value)"
	}
	return fmt.Sprintf("%q", r.Text)
}

// pyNumber spells a number read by the loader in decimal.
func pyNumber(r pyScalar) string {
	if r.Kind == pyInt {
		return r.Int.String()
	}
	return floatNode(r.Float).Value
}

// readsAsString reports whether a plain scalar with text s reads back as
// that string in both yaml.v3 and vllm-omni's loader. yaml.v3's encoder
// already quotes what it would read as another type; this adds what only
// YAML 1.1 reads differently (yes, on, 1:30, 1e5, <<, =). y and n, which
// YAML 1.1's spec lists as booleans and PyYAML does not, are quoted too, for
// other YAML 1.1 readers.
func readsAsString(s string) bool {
	switch s {
	case "y", "Y", "n", "N":
		return false
	}
	return pyPlainKind(s) == pyStr
}

// plainDecimal reads the common case of pyParseInt, a short run of decimal
// digits with no sign, underscore or leading zero (8, 25201), without the
// general path's allocations; it is the same number the general path reads.
func plainDecimal(s string) (int64, bool) {
	if s == "" || len(s) > 18 || (s[0] == '0' && len(s) > 1) {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}
