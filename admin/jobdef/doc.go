// Package jobdef validates job definitions submitted through the API, the
// CLI or the console, and turns them into store rows. Every problem is
// reported per field with a message that says what is wrong and how to fix
// it; nothing is written unless the whole definition is valid.
package jobdef
