// Package web is the shardjob console: static HTML, CSS, JavaScript modules
// and the English and Simplified Chinese dictionaries, embedded in the admin
// binary (no Node build is needed to run or test it). The console talks only
// to the /api/v1 JSON API, with the session cookie and the CSRF header, like
// any other client.
//
// Layout of static/:
//
//	index.html         the shell: top bar, view container, toasts, tooltip
//	console.css        all styles (the CSP forbids inline styles)
//	js/main.js         boot, login, hash router, live refresh loop
//	js/api.js          fetch wrapper (CSRF header, errors with field maps)
//	js/i18n.js         dictionaries, language and UTC switch, formatting
//	js/dom.js          element builders, keyed table updates, dialogs
//	js/charts.js       SVG charts drawn by the console itself
//	js/pages/*.js      one module per page
//	i18n/<lang>.json   every visible string, one file per language
//
// The Content-Security-Policy allows scripts and styles from the console's
// own origin only: no inline script, inline style or event handler
// attribute, no CDN, no external font.
package web

import (
	"embed"
	"io/fs"
	"net/http"

	"github.com/gin-gonic/gin"
)

//go:embed static
var files embed.FS

// ContentSecurityPolicy is sent with the console's page and assets.
const ContentSecurityPolicy = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; " +
	"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// Static is the console's files, rooted at static/.
func Static() fs.FS {
	sub, err := fs.Sub(files, "static")
	if err != nil {
		panic(err) // the embed directive guarantees the directory
	}
	return sub
}

func securityHeaders(c *gin.Context) {
	h := c.Writer.Header()
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Frame-Options", "DENY")
	// The embedded files carry no modification time, so there is nothing to
	// revalidate against: always fetch, so a new binary's console is used at
	// once.
	h.Set("Cache-Control", "no-cache")
}

// Register serves the console at / and its assets under /ui/.
func Register(r *gin.Engine) {
	static := Static()
	index, err := fs.ReadFile(static, "index.html")
	if err != nil {
		panic(err)
	}
	serveIndex := func(c *gin.Context) {
		securityHeaders(c)
		c.Data(http.StatusOK, "text/html; charset=utf-8", index)
	}
	r.GET("/", serveIndex)
	r.HEAD("/", serveIndex)
	r.GET("/favicon.ico", func(c *gin.Context) { c.Redirect(http.StatusMovedPermanently, "/ui/favicon.svg") })
	fileServer := http.StripPrefix("/ui", http.FileServer(http.FS(noDirs{static})))
	serveFile := func(c *gin.Context) {
		securityHeaders(c)
		fileServer.ServeHTTP(c.Writer, c.Request)
	}
	r.GET("/ui/*filepath", serveFile)
	r.HEAD("/ui/*filepath", serveFile)
}

// noDirs hides directories, so /ui/js/ is a 404 and not a listing.
type noDirs struct{ fs.FS }

func (n noDirs) Open(name string) (fs.File, error) {
	f, err := n.FS.Open(name)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	if st.IsDir() {
		_ = f.Close()
		return nil, fs.ErrNotExist
	}
	return f, nil
}
