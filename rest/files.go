package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"mime"
	"net/http"
	"slices"

	"shipgraph/model"
	"shipgraph/resolve"
	"shipgraph/rest/jsonapi"
)

// Document files, the public service's direct-upload flow:
//
//	POST /rails/active_storage/direct_uploads   {"blob": {filename, content_type, byte_size, checksum}}
//	                                            200: the blob, its signed_id and direct_upload {url, headers}
//	(PUT the bytes to direct_upload.url with direct_upload.headers: no key)
//	POST /v2/documents                          {"data": {"type": "document", "attributes":
//	                                             {"name", "attached_document": <signed_id>},
//	                                             "relationships": {"shipments"|"cargos": {"data": [...]}}}}
//	                                            201; 409 duplicate_document
//	GET  /v2/documents/{id}/download_url        {"download_url": <signed URL>}
//
// The rules live in resolve/files.go; docs/files.md has the flow.

const directUploadsPath = "/rails/active_storage/direct_uploads"

// directUpload announces a file and answers where to PUT it.
func (s *server) directUpload(w http.ResponseWriter, r *http.Request) {
	c, err := readBlob(r)
	c.Invalid = firstErr(resolve.Malformed(err), c.Invalid)
	d, err := s.res.CreateUpload(r.Context(), who(r), c)
	if err != nil {
		jsonapi.WriteError(w, r, atBlob(err))
		return
	}
	u := d.Upload
	service := "local"
	if s.res.Files != nil && !s.res.Files.Local() {
		service = "remote"
	}
	writeJSON(w, http.StatusOK, directUploadBody{
		ID: u.ID, Key: u.Key, Filename: u.Filename, ContentType: u.ContentType,
		Metadata: map[string]any{}, ServiceName: service, ByteSize: u.ByteSize, Checksum: u.Checksum,
		CreatedAt: ts(u.CreatedAt), SignedID: d.SignedID,
		DirectUpload: directUploadTarget{URL: d.URL, Headers: d.Headers},
	})
}

type directUploadBody struct {
	ID           string             `json:"id"`
	Key          string             `json:"key"`
	Filename     string             `json:"filename"`
	ContentType  string             `json:"content_type"`
	Metadata     map[string]any     `json:"metadata"`
	ServiceName  string             `json:"service_name"`
	ByteSize     int64              `json:"byte_size"`
	Checksum     string             `json:"checksum"`
	CreatedAt    timestamp          `json:"created_at"`
	SignedID     string             `json:"signed_id"`
	DirectUpload directUploadTarget `json:"direct_upload"`
}

type directUploadTarget struct {
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}

// readBlob reads {"blob": {...}}; a member of the wrong type is a 422 at
// /blob/<member>, a body of another shape a 400.
func readBlob(r *http.Request) (resolve.CreateUpload, error) {
	var c resolve.CreateUpload
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || (mt != "application/json" && mt != jsonapi.MediaType) {
		return c, jsonapi.StatusErrorf(http.StatusUnsupportedMediaType, "send the body as application/json")
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return c, jsonapi.StatusErrorf(http.StatusRequestEntityTooLarge, "the request body is larger than %d bytes", tooLarge.Limit)
		}
		return c, jsonapi.StatusErrorf(http.StatusBadRequest, "the request body could not be read")
	}
	var top struct {
		Blob map[string]json.RawMessage `json:"blob"`
	}
	if err := json.Unmarshal(body, &top); err != nil || top.Blob == nil {
		return c, jsonapi.ShapeError("/blob", `the body must be {"blob": {"filename", "content_type", "byte_size", "checksum"}}`)
	}
	str := func(name string, dst *string) error {
		if err := json.Unmarshal(top.Blob[name], dst); err != nil || *dst == "" {
			return blobError(name, "blob.%s is required and must be a string", name)
		}
		return nil
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"filename", &c.Filename}, {"content_type", &c.ContentType}, {"checksum", &c.Checksum}} {
		if err := str(f.name, f.dst); err != nil {
			c.Invalid = err
			return c, nil
		}
	}
	if err := json.Unmarshal(top.Blob["byte_size"], &c.ByteSize); err != nil {
		c.Invalid = blobError("byte_size", "blob.byte_size is required and must be an integer")
	}
	return c, nil
}

func blobError(name, format string, args ...any) error {
	return model.Errorf(model.EINVALID, format, args...).AtPointer("/blob/" + name)
}

// atBlob points the resolver's field errors at /blob/<field>.
func atBlob(err error) error {
	if e, ok := model.AsError(err); ok && e.Field != "" && e.Field != model.WholeInput {
		c := *e
		c.Pointer, c.Field = "/blob/"+e.Field, ""
		return &c
	}
	return err
}

// createDocument creates a document from a direct upload's signed id.
func (s *server) createDocument(w http.ResponseWriter, r *http.Request) {
	p, err := parseParams(r, documentItem)
	if err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	attrs, rels, err := jsonapi.ReadResource(r, "document")
	var c resolve.CreateDocument
	if err == nil {
		c, err = documentCreate(attrs, rels)
	}
	c.Invalid = firstErr(resolve.Malformed(err), c.Invalid)
	d, err := s.res.CreateDocument(r.Context(), who(r), c)
	serveCreated(s, w, r, p, d, err, withIncludes)
}

// documentCreate reads name and attached_document, and the shipments and
// cargos (containers) linkage. Linkage of the wrong shape is a 400; a
// value error is reported by the resolver layer in its order.
func documentCreate(attrs jsonapi.Attributes, rels map[string]json.RawMessage) (resolve.CreateDocument, error) {
	c := resolve.CreateDocument{Invalid: attrs.Only("%s cannot be set; a new document takes name and attached_document", "name", "attached_document")}
	if v, err := attrs.Text("name", true); err != nil {
		if c.Invalid == nil {
			c.Invalid = err
		}
	} else {
		c.Name = *v
	}
	if v, err := attrs.Text("attached_document", true); err != nil {
		if c.Invalid == nil {
			c.Invalid = err
		}
	} else {
		c.SignedID = *v
	}
	for _, name := range slices.Sorted(maps.Keys(rels)) {
		var want string
		var dst *[]string
		switch name {
		case "shipments":
			want, dst = "shipment", &c.ShipmentIDs
		case "cargos", "containers":
			want, dst = "container", &c.ContainerIDs
		default:
			return c, jsonapi.ShapeError("/data/relationships/"+name, "a new document links shipments and cargos (containers) only")
		}
		data, ok := jsonapi.ToManyData(rels[name])
		if !ok {
			return c, jsonapi.ShapeError("/data/relationships/"+name+"/data", "relationships.%s.data must be a list of {\"type\": %q, \"id\": …}", name, want)
		}
		for _, x := range data {
			if x.Type != want || x.ID == "" {
				return c, jsonapi.ShapeError("/data/relationships/"+name+"/data", "relationships.%s.data must be a list of {\"type\": %q, \"id\": …}", name, want)
			}
			*dst = append(*dst, model.NormalizeID(x.ID))
		}
	}
	return c, nil
}

// documentDownloadURL answers {"download_url": …}: a signed URL of the
// document's file that expires (application/json, as the OpenAPI
// document has it).
func (s *server) documentDownloadURL(w http.ResponseWriter, r *http.Request) {
	if _, err := parseParams(r, endpoint{Serializer: "V2::DocumentSerializer"}); err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	link, err := s.res.DownloadURL(r.Context(), who(r), r.PathValue("id"))
	if err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"download_url": link})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}
