// Package auth holds the admin's credential primitives: bcrypt password
// hashing, random session/API tokens stored only as SHA-256 hashes, role
// ordering for RBAC, a login throttle, and the first-start bootstrap that
// creates the initial admin user with a generated password (there is no
// default password).
package auth
