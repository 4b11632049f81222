package auth

import (
	_ "embed"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"

	"github.com/shardjob/shardjob/admin/msg"
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
type PasswordError struct {
	Reason string
	// Msg is Reason as a message code with arguments (admin/msg), which
	// the console shows in the reader's language.
	Msg msg.Msg
}

func (e *PasswordError) Error() string { return e.Reason }

// Message is the error as a message code (msg.Of finds it).
func (e *PasswordError) Message() msg.Msg { return e.Msg }

// refused is the refusal code with the arguments kv (msg.New).
func refused(code msg.Code, kv ...any) *PasswordError {
	m := msg.New(code, kv...)
	return &PasswordError{Reason: m.String(), Msg: m}
}

// hint is the advice that ends a refusal of a guessable password.
var hint = msg.New(msg.PasswordHint)

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
		return refused(msg.PasswordTooShort, "length", n, "min", MinPasswordLength)
	}
	if len(pw) > MaxPasswordBytes {
		return refused(msg.PasswordTooLong, "bytes", len(pw), "max", MaxPasswordBytes)
	}
	s := squash(pw)
	if commonPasswords[s] || commonPasswords[stem(s)] {
		return refused(msg.PasswordCommon, "hint", hint)
	}
	if repeated(s) {
		return refused(msg.PasswordRepeated, "hint", hint)
	}
	if consecutive(s) {
		return refused(msg.PasswordConsecutive, "hint", hint)
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

// HashCost is the bcrypt cost of the hashes HashPassword makes:
// PasswordCost. Only test binaries lower it (to bcrypt.MinCost), in packages
// where no test measures it: a hash of cost 10 takes 2.4 s under the race
// detector on a loaded 2-core machine, against 31 ms at cost 4, and the API
// tests make hundreds. The admin never changes it. (The hash of an unknown
// user's check, dummyHash, keeps PasswordCost.)
var HashCost = PasswordCost

// HashPassword checks pw against the policy (ValidatePassword: a refusal is
// a *PasswordError) and returns its bcrypt hash.
func HashPassword(pw string) (string, error) {
	if err := ValidatePassword(pw); err != nil {
		return "", err
	}
	h, err := bcrypt.GenerateFromPassword([]byte(pw), HashCost)
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
