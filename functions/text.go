package functions

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// checkText refuses data that is no YAML text before the parser does: its
// own errors say neither where the bad byte is nor what to do, and binary
// files, a stray image or archive among the manifests say, are the usual
// cause. YAML is UTF-8 here; a stream marked as UTF-16 by its
// byte order mark is left to the parser, which reads UTF-16 too.
func checkText(name string, data []byte) *Diagnostic {
	d, _ := textProblem(name, data)
	return d
}

// textProblem is checkText's Diagnostic, and the offset of the byte it is
// about.
func textProblem(name string, data []byte) (*Diagnostic, int) {
	if bytes.HasPrefix(data, []byte{0xFF, 0xFE}) || bytes.HasPrefix(data, []byte{0xFE, 0xFF}) {
		return nil, 0
	}
	line, lineStart := 1, 0
	for i := 0; i < len(data); {
		if b := data[i]; b >= 0x20 && b < 0x7F || b == '\t' || b == '\r' {
			// Plain ASCII, the bulk of any manifest.
			i++
			continue
		}
		r, size := utf8.DecodeRune(data[i:])
		var problem string
		switch {
		case r == utf8.RuneError && size <= 1:
			problem = fmt.Sprintf("byte 0x%02X is not UTF-8 text", data[i])
		case !yamlPrintable(r):
			problem = fmt.Sprintf("the control character %U may not appear in YAML, not even in a quoted string (a double-quoted string may hold it as the escape %s)", r, escape(r))
		}
		if problem != "" {
			return &Diagnostic{Severity: Error, Source: Source{Path: name}, Line: line,
				Column:  utf8.RuneCount(data[lineStart:i]) + 1,
				Message: "not a YAML file: " + problem + "; is it a binary file?"}, i
		}
		if r == '\n' {
			line, lineStart = line+1, i+1
		}
		i += size
	}
	return nil, 0
}

func escape(r rune) string {
	if r <= 0xFF {
		return fmt.Sprintf(`"\x%02X"`, r)
	}
	return fmt.Sprintf(`"\u%04X"`, r)
}

// yamlPrintable is YAML's set of characters a stream may hold.
func yamlPrintable(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return true
	case r < 0x20 || r == 0x7F:
		return false
	case r >= 0x80 && r <= 0x9F:
		return r == 0x85
	case r >= 0xD800 && r <= 0xDFFF, r == 0xFFFE, r == 0xFFFF:
		return false
	}
	return true
}
