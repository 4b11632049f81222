package auth

import (
	_ "embed"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"
)

// Password policy: every password set through the API (user creation, an
// admin's reset, one's own change) and the generated first-start password
// pass ValidatePassword.
const (
	// MinPasswordLength is the shortest password, in characters (Unicode
	// code points, so a passphrase in any script counts what it shows).
	MinPasswordLength = 12
	// MaxPasswordBytes is bcrypt's limit: it ignores what follows.
	MaxPasswordBytes = 72
	// PasswordCost is the bcrypt cost of stored hashes.
	PasswordCost = bcrypt.DefaultCost
)

// PasswordError is a password the policy refuses. Its message says what is
// wrong and how to choose a better one.
type PasswordError struct{ Reason string }

func (e *PasswordError) Error() string { return e.Reason }

const passphraseHint = "choose another, for example a passphrase of three or four unrelated words (spaces and any letters are allowed)"

// commonPasswordList holds lower-case passwords and password stems that
// attackers try first. Written for shardjob; one a line.
//
//go:embed common_passwords.txt
var commonPasswordList string

var commonPasswords = func() map[string]bool {
	m := map[string]bool{}
	for _, l := range strings.Split(commonPasswordList, "\n") {
		if l = strings.TrimSpace(l); l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		m[squash(l)] = true
		if st := stem(squash(l)); st != "" { // "trustno1" also as "trustno"
			m[st] = true
		}
	}
	return m
}()

// squash lower-cases pw and drops its white space, so that "Correct Horse"
// and "correcthorse" compare equal.
func squash(pw string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return unicode.ToLower(r)
	}, pw)
}

// stem is s without the digits and punctuation around it: the word of
// "Summer2024!" or "!!password1".
func stem(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsDigit(r) || unicode.IsPunct(r) || unicode.IsSymbol(r) })
}

// ValidatePassword checks pw against the policy: at least
// MinPasswordLength characters, at most MaxPasswordBytes bytes, not one of
// the most common passwords (also with digits or symbols around it), not a
// short pattern repeated, not a run of consecutive characters. Spaces and
// any Unicode letters are allowed. A refusal is a *PasswordError.
func ValidatePassword(pw string) error {
	if n := utf8.RuneCountInString(pw); n < MinPasswordLength {
		return &PasswordError{fmt.Sprintf("password is %d characters long; use at least %d: a passphrase of three or four unrelated words, spaces allowed, is long and easy to remember", n, MinPasswordLength)}
	}
	if len(pw) > MaxPasswordBytes {
		return &PasswordError{fmt.Sprintf("password is %d bytes long; at most %d bytes are possible (the limit of bcrypt; letters outside ASCII take 2 to 4 bytes each): use a shorter one", len(pw), MaxPasswordBytes)}
	}
	s := squash(pw)
	if commonPasswords[s] || commonPasswords[stem(s)] {
		return &PasswordError{"password is one of the most common passwords (or one with digits or symbols around it), which attackers try first; " + passphraseHint}
	}
	if repeated(s) {
		return &PasswordError{"password repeats a short pattern (like aaaa or abcabc); " + passphraseHint}
	}
	if consecutive(s) {
		return &PasswordError{"password is a run of consecutive characters (like abcdef or 98765); " + passphraseHint}
	}
	return nil
}

// repeated reports whether s is one shorter string written twice or more.
func repeated(s string) bool {
	r := []rune(s)
	for unit := 1; unit <= len(r)/2; unit++ {
		if len(r)%unit == 0 && strings.Repeat(string(r[:unit]), len(r)/unit) == s {
			return true
		}
	}
	return false
}

// consecutive reports whether every character of s is the one before it
// plus one, or every one minus one ("abcdef", "987654").
func consecutive(s string) bool {
	r := []rune(s)
	if len(r) < 2 {
		return false
	}
	step := r[1] - r[0]
	if step != 1 && step != -1 {
		return false
	}
	for i := 2; i < len(r); i++ {
		if r[i]-r[i-1] != step {
			return false
		}
	}
	return true
}

// HashPassword checks pw against the policy (ValidatePassword: a refusal is
// a *PasswordError) and returns its bcrypt hash.
func HashPassword(pw string) (string, error) {
	if err := ValidatePassword(pw); err != nil {
		return "", err
	}
	h, err := bcrypt.GenerateFromPassword([]byte(pw), PasswordCost)
	if err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	return string(h), nil
}

// dummyHash is a bcrypt hash of PasswordCost that no password of a user
// matches; CheckPassword compares against it when there is no such user.
const dummyHash = "$2a$10$6z2q/GcWozkzF3P8Dl4e3eDgCDj40LC/I6Lrv98FSTbwf98rwtyhS"

// CheckPassword reports whether pw matches the bcrypt hash. An empty hash
// stands for a user that does not exist: pw is then compared against a
// dummy hash of the same cost and the answer is false, so that the check
// takes as long as for a real user and its timing does not tell which user
// names exist.
func CheckPassword(hash, pw string) bool {
	if hash == "" {
		_ = bcrypt.CompareHashAndPassword([]byte(dummyHash), []byte(pw))
		return false
	}
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(pw)) == nil
}
