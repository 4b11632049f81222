package testenv

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// testPKI is a CA made for one test server and the server certificate it
// signed, written as PEM files.
type testPKI struct {
	CAFile   string // the CA certificate, for clients (ca_file)
	CertFile string // the server's certificate
	KeyFile  string // the server's key (PKCS #8)
}

// newTestPKI makes a CA and a certificate for 127.0.0.1 and localhost
// signed by it, valid for a day, and writes ca.pem, server.pem and
// server.key into dir. Keys are ECDSA P-256: quick to make.
func newTestPKI(dir, name string) (testPKI, error) {
	pki := testPKI{
		CAFile:   filepath.Join(dir, "ca.pem"),
		CertFile: filepath.Join(dir, "server.pem"),
		KeyFile:  filepath.Join(dir, "server.key"),
	}
	fail := func(err error) (testPKI, error) {
		return testPKI{}, fmt.Errorf("testenv: make the test CA of %s: %w", name, err)
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fail(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "shardjob test CA for " + name},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return fail(err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return fail(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fail(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "localhost"},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return fail(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fail(err)
	}
	for _, f := range []struct {
		path, typ string
		der       []byte
	}{
		{pki.CAFile, "CERTIFICATE", caDER},
		{pki.CertFile, "CERTIFICATE", der},
		{pki.KeyFile, "PRIVATE KEY", keyDER},
	} {
		if err := os.WriteFile(f.path, pem.EncodeToMemory(&pem.Block{Type: f.typ, Bytes: f.der}), 0o600); err != nil {
			return fail(err)
		}
	}
	return pki, nil
}
