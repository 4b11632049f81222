package web_test

import (
	"encoding/json"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/web"
)

func serve(t *testing.T, method, path string) *httptest.ResponseRecorder {
	t.Helper()
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	web.Register(r)
	w := httptest.NewRecorder()
	r.ServeHTTP(w, httptest.NewRequest(method, path, nil))
	return w
}

func TestIndexAndAssetsCarryTheStrictCSP(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"/", "/ui/js/main.js", "/ui/console.css", "/ui/i18n/en.json"} {
		w := serve(t, http.MethodGet, p)
		require.Equal(t, http.StatusOK, w.Code, p)
		csp := w.Header().Get("Content-Security-Policy")
		require.Contains(t, csp, "script-src 'self'", p)
		require.Contains(t, csp, "style-src 'self'", p)
		require.NotContains(t, csp, "unsafe-inline", p)
		require.Equal(t, "nosniff", w.Header().Get("X-Content-Type-Options"), p)
	}
	require.Contains(t, serve(t, http.MethodGet, "/ui/js/main.js").Header().Get("Content-Type"), "javascript",
		"module scripts need a JavaScript MIME type")
	require.Equal(t, http.StatusNotFound, serve(t, http.MethodGet, "/ui/js/").Code, "no directory listings")
	require.Equal(t, http.StatusOK, serve(t, http.MethodHead, "/").Code)
}

// TestNoInlineScriptsStylesOrHandlers keeps the console compatible with the
// CSP: no inline <script>, <style>, style= or on*= attributes, and no
// innerHTML (every node is built with the DOM API).
func TestNoInlineScriptsStylesOrHandlers(t *testing.T) {
	t.Parallel()
	static := web.Static()
	inlineScript := regexp.MustCompile(`<script(?:\s[^>]*)?>\s*[^<\s]`)
	handlerAttr := regexp.MustCompile(`(?i)\son[a-z]+\s*=`)
	err := fs.WalkDir(static, ".", func(path string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		if d.IsDir() {
			return nil
		}
		b, err := fs.ReadFile(static, path)
		require.NoError(t, err)
		src := string(b)
		switch {
		case strings.HasSuffix(path, ".html"):
			require.NotRegexp(t, inlineScript, src, path)
			require.NotContains(t, src, "<style", path)
			require.NotRegexp(t, `\sstyle\s*=`, src, path)
			require.NotRegexp(t, handlerAttr, src, path)
			for _, tag := range regexp.MustCompile(`<script[^>]*>`).FindAllString(src, -1) {
				require.Contains(t, tag, `src="/ui/`, "%s: %s loads a same-origin file", path, tag)
			}
		case strings.HasSuffix(path, ".js"):
			require.NotContains(t, src, "innerHTML", path)
			require.NotContains(t, src, "eval(", path)
			require.NotContains(t, src, "new Function", path)
			require.NotRegexp(t, `setAttribute\(\s*["']style["']`, src, path)
			// XML namespaces are names, not resources.
			require.NotRegexp(t, `https?://`, strings.ReplaceAll(src, "http://www.w3.org/", ""), "%s: no external resources", path)
		case strings.HasSuffix(path, ".css"):
			require.NotContains(t, src, "@import", path)
			require.NotRegexp(t, `url\(\s*["']?https?:`, src, path)
		}
		return nil
	})
	require.NoError(t, err)
}

// TestDictionariesAreComplete checks that English and Simplified Chinese
// have the same keys, that every literal key the scripts use exists, and
// that every prefix used with a computed key has entries.
func TestDictionariesAreComplete(t *testing.T) {
	t.Parallel()
	static := web.Static()
	load := func(name string) map[string]string {
		b, err := fs.ReadFile(static, "i18n/"+name+".json")
		require.NoError(t, err)
		var d map[string]string
		require.NoError(t, json.Unmarshal(b, &d), name)
		return d
	}
	en, zh := load("en"), load("zh-CN")
	var onlyEn, onlyZh []string
	for k := range en {
		if _, ok := zh[k]; !ok {
			onlyEn = append(onlyEn, k)
		}
	}
	for k, v := range zh {
		if _, ok := en[k]; !ok {
			onlyZh = append(onlyZh, k)
		}
		require.NotEmpty(t, strings.TrimSpace(v), "zh-CN %s is empty", k)
	}
	sort.Strings(onlyEn)
	sort.Strings(onlyZh)
	require.Empty(t, onlyEn, "keys missing in zh-CN.json")
	require.Empty(t, onlyZh, "keys missing in en.json")

	literal := regexp.MustCompile(`\bt\("([A-Za-z0-9_.]+)"`)
	prefix := regexp.MustCompile(`\bt(?:Or)?\("([A-Za-z0-9_.]+\.)"\s*\+`)
	err := fs.WalkDir(static, "js", func(path string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		if d.IsDir() {
			return nil
		}
		b, err := fs.ReadFile(static, path)
		require.NoError(t, err)
		for _, m := range literal.FindAllStringSubmatch(string(b), -1) {
			if strings.HasSuffix(m[1], ".") {
				continue
			}
			require.Contains(t, en, m[1], "%s uses t(%q) which is not in en.json", path, m[1])
		}
		for _, m := range prefix.FindAllStringSubmatch(string(b), -1) {
			found := false
			for k := range en {
				if strings.HasPrefix(k, m[1]) {
					found = true
					break
				}
			}
			require.True(t, found, "%s builds keys with prefix %q but en.json has none", path, m[1])
		}
		return nil
	})
	require.NoError(t, err)
}
