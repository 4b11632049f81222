package cluster

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// LogLine is one line of slog text output, as its key=value attributes
// (msg, time, level and the handler's).
type LogLine map[string]string

var attrRE = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_.]*)=("(?:[^"\\]|\\.)*"|\S*)`)

// ParseLine reads the attributes of a slog text line; quoted values are
// unquoted, and the first occurrence of a key wins.
func ParseLine(raw string) LogLine {
	l := LogLine{}
	for _, m := range attrRE.FindAllStringSubmatch(raw, -1) {
		v := m[2]
		if strings.HasPrefix(v, `"`) {
			if u, err := strconv.Unquote(v); err == nil {
				v = u
			}
		}
		if _, seen := l[m[1]]; !seen {
			l[m[1]] = v
		}
	}
	return l
}

// LogLines parses the lines of output that contain substr.
func LogLines(output, substr string) []LogLine {
	var out []LogLine
	for _, raw := range strings.Split(output, "\n") {
		if strings.Contains(raw, substr) {
			out = append(out, ParseLine(raw))
		}
	}
	return out
}

// Msg is the message of the line.
func (l LogLine) Msg() string { return l["msg"] }

// Time is the time of the line; zero when it has none.
func (l LogLine) Time() time.Time {
	at, _ := time.Parse(time.RFC3339Nano, l["time"])
	return at
}

// Int is the attribute key as an integer; 0 when absent or not one.
func (l LogLine) Int(key string) int64 {
	n, _ := strconv.ParseInt(l[key], 10, 64)
	return n
}
