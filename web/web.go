// Package web is the shardjob console: static HTML, CSS and JavaScript
// embedded in the admin binary (no Node build is needed to run or test it).
// The console talks only to the /api/v1 JSON API, with the session cookie
// and the CSRF header, like any other client.
package web

import (
	"embed"
	"io/fs"
	"net/http"

	"github.com/gin-gonic/gin"
)

//go:embed static
var files embed.FS

// Static is the console's files, rooted at static/.
func Static() fs.FS {
	sub, err := fs.Sub(files, "static")
	if err != nil {
		panic(err) // the embed directive guarantees the directory
	}
	return sub
}

// Register serves the console at / and its assets under /ui/.
func Register(r *gin.Engine) {
	static := Static()
	index, err := fs.ReadFile(static, "index.html")
	if err != nil {
		panic(err)
	}
	serveIndex := func(c *gin.Context) {
		c.Header("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'")
		c.Header("X-Content-Type-Options", "nosniff")
		c.Data(http.StatusOK, "text/html; charset=utf-8", index)
	}
	r.GET("/", serveIndex)
	r.HEAD("/", serveIndex)
	r.StaticFS("/ui", http.FS(static))
}
