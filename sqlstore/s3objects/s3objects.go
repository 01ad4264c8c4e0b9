// Package s3objects is a sqlstore.ObjectStore in a bucket of any
// S3-compatible object store (AWS S3, Cloudflare R2's S3 API, MinIO, …):
// one PUT or GET per object, path-style, signed with AWS Signature Version 4
// by the AWS SDK's signer (the one part of an S3 client the two calls need):
//
//	store, err := s3objects.Open("s3://bucket/prefix?endpoint=https://ACCOUNT.r2.cloudflarestorage.com&region=auto",
//		os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"))
//	archive := &sqlstore.Archive{Store: db, Objects: store, …}
//
// Objects are named PREFIX/KEY. Without endpoint the store is AWS S3
// (https://s3.REGION.amazonaws.com); an http:// endpoint is reached without
// TLS (a local MinIO). region defaults to us-east-1 (R2 wants auto).
package s3objects

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/rowcall/rowcall/sqlstore"
)

// Store is one bucket and key prefix.
type Store struct {
	// Client sends the requests (http.DefaultClient when nil).
	Client *http.Client

	base          string // endpoint/bucket
	prefix        string
	region, where string // where: s3://bucket/prefix, in errors
	creds         aws.Credentials
	signer        *v4.Signer
}

var _ sqlstore.ObjectStore = (*Store)(nil)

// IsURL reports whether archive names an S3 bucket (s3://…) rather than a directory.
func IsURL(archive string) bool { return strings.HasPrefix(archive, "s3://") }

// Open parses s3://BUCKET[/PREFIX][?endpoint=URL&region=R] and returns its
// store, signing with the access key id and secret given.
func Open(rawURL, accessKeyID, secret string) (*Store, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "s3" || u.Host == "" {
		return nil, fmt.Errorf("receipt archive %q: want s3://BUCKET/PREFIX?endpoint=URL&region=R", rawURL)
	}
	q := u.Query()
	for k := range q {
		if k != "endpoint" && k != "region" {
			return nil, fmt.Errorf("receipt archive %q: unknown parameter %q (endpoint and region are known)", rawURL, k)
		}
	}
	region := q.Get("region")
	if region == "" {
		region = "us-east-1"
	}
	endpoint := "https://s3." + region + ".amazonaws.com"
	if e := q.Get("endpoint"); e != "" {
		eu, err := url.Parse(e)
		if err != nil || (eu.Scheme != "http" && eu.Scheme != "https") || eu.Host == "" || strings.Trim(eu.Path, "/") != "" {
			return nil, fmt.Errorf("receipt archive %q: endpoint %q is not an http:// or https:// origin", rawURL, e)
		}
		endpoint = eu.Scheme + "://" + eu.Host
	}
	if accessKeyID == "" || secret == "" {
		return nil, fmt.Errorf("receipt archive s3://%s: no access key id or secret access key", u.Host)
	}
	prefix := strings.Trim(u.Path, "/")
	return &Store{base: endpoint + "/" + url.PathEscape(u.Host), prefix: prefix, region: region,
		where: "s3://" + path.Join(u.Host, prefix), creds: aws.Credentials{AccessKeyID: accessKeyID, SecretAccessKey: secret},
		signer: v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })}, nil
}

// Put writes one object in a single PUT: S3 stores it whole or not at all.
func (s *Store) Put(ctx context.Context, key string, data []byte) error {
	res, err := s.do(ctx, http.MethodPut, key, data)
	if err != nil {
		return fmt.Errorf("%s: put %s: %w", s.where, key, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: put %s: %w", s.where, key, failure(res))
	}
	io.Copy(io.Discard, res.Body)
	return nil
}

// Get reads one object; a missing one is sqlstore.ErrObjectNotFound.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	res, err := s.do(ctx, http.MethodGet, key, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: get %s: %w", s.where, key, err)
	}
	defer res.Body.Close()
	if res.StatusCode == http.StatusNotFound {
		return nil, fmt.Errorf("%s: %s: %w", s.where, key, sqlstore.ErrObjectNotFound)
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: get %s: %w", s.where, key, failure(res))
	}
	data, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: get %s: %w", s.where, key, err)
	}
	return data, nil
}

// do sends one signed request for the object key.
func (s *Store) do(ctx context.Context, method, key string, body []byte) (*http.Response, error) {
	var segs []string
	for _, p := range strings.Split(path.Join(s.prefix, key), "/") {
		segs = append(segs, url.PathEscape(p))
	}
	req, err := http.NewRequestWithContext(ctx, method, s.base+"/"+strings.Join(segs, "/"), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	req.Header.Set("X-Amz-Content-Sha256", hash)
	if method == http.MethodPut {
		req.ContentLength = int64(len(body))
		req.Header.Set("Content-Type", "application/gzip")
	} else {
		req.Body, req.GetBody = http.NoBody, nil
	}
	if err := s.signer.SignHTTP(ctx, s.creds, req, hash, "s3", s.region, time.Now()); err != nil {
		return nil, err
	}
	client := s.Client
	if client == nil {
		client = http.DefaultClient
	}
	return client.Do(req)
}

// failure is the error of an S3 answer other than 200: its status, and the
// code and message of its XML error document.
func failure(res *http.Response) error {
	var e struct{ Code, Message string }
	xml.NewDecoder(io.LimitReader(res.Body, 64<<10)).Decode(&e)
	if e.Code == "" {
		return fmt.Errorf("%s", res.Status)
	}
	return fmt.Errorf("%s: %s: %s", res.Status, e.Code, e.Message)
}
