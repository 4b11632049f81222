// Package auth holds the admin's credential primitives: bcrypt password
// hashing behind a password policy (ValidatePassword: length, the most
// common passwords, patterns), a password check that costs the same for
// unknown users, random session tokens and API keys stored only as SHA-256 hashes,
// role ordering for RBAC, the attempt throttle of logins and password
// changes (bounded memory, counted before the credential is checked), and
// the first-start bootstrap that creates the initial admin user with a
// generated password (there is no default password).
package auth
