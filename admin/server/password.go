package server

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/shardjob/shardjob/admin/auth"
)

// announcePassword tells the operator how to sign in the first time. pw is
// the password auth.Bootstrap generated ("" when users existed already):
// it is printed in a frame that stands out of the log lines and, when file
// is set, written there (0600) until the first login. A later start that
// still finds the file says where the password is.
func announcePassword(out io.Writer, pw, file string) error {
	if pw == "" {
		if file == "" {
			return nil
		}
		if _, err := os.Stat(file); err == nil {
			fmt.Fprintf(out, "shardjob: the first-start password of console user %q is in %s (until its first login)\n", auth.BootstrapUser, file)
		}
		return nil
	}
	lines := []string{
		fmt.Sprintf("shardjob: first start: created console user %q", auth.BootstrapUser),
		"with password " + pw,
	}
	if file != "" {
		if err := writePasswordFile(file, pw); err != nil {
			return err
		}
		lines = append(lines, "(also in "+file+" until the first login)")
	} else {
		lines = append(lines, "It is shown once: store it now.")
	}
	lines = append(lines, "Change it in the console: open the user menu (your name, top right), then Password.")
	fmt.Fprint(out, frame(lines))
	return nil
}

// writePasswordFile writes pw to file, readable by its owner only; an
// existing file (from an earlier database) is replaced.
func writePasswordFile(file, pw string) error {
	if err := os.Remove(file); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("initial password file: %w", err)
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("initial password file: %w", err)
	}
	_, err = f.WriteString(pw + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("initial password file: %w", err)
	}
	return nil
}

// frame draws lines in an ASCII box (every terminal and log collector shows
// it the same), with an empty line before and after.
func frame(lines []string) string {
	width := 0
	for _, l := range lines {
		width = max(width, len(l))
	}
	var b strings.Builder
	rule := "+" + strings.Repeat("-", width+4) + "+\n"
	b.WriteString("\n" + rule)
	for _, l := range lines {
		b.WriteString("|  " + l + strings.Repeat(" ", width-len(l)) + "  |\n")
	}
	b.WriteString(rule + "\n")
	return b.String()
}
