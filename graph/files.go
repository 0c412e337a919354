package graph

import (
	"context"

	"shipgraph/model"
	"shipgraph/resolve"
)

// Document files: thin adapters over resolve/files.go.

// downloadURL is Document.downloadUrl: null for a document without a file.
func downloadURL(ctx context.Context, res *resolve.Resolver, d *model.Document) (*string, error) {
	link, err := res.DownloadURL(ctx, who(ctx), d.ID)
	if model.ErrorCode(err) == model.ENOTFOUND {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return &link, nil
}

// createDocument is createDocument's command: the file from a signed id or
// from the multipart request.
func createDocument(in model.CreateDocumentInput) resolve.CreateDocument {
	c := resolve.CreateDocument{Name: in.Name, ShipmentIDs: in.ShipmentIds, ContainerIDs: in.ContainerIds}
	if in.AttachedDocument != nil {
		c.SignedID = *in.AttachedDocument
	}
	if f := in.File; f != nil {
		c.File = &resolve.NewFile{Filename: f.Filename, ContentType: f.ContentType, Size: f.Size, Body: f.File}
		if c.SignedID != "" {
			c.Invalid = model.Errorf(model.EINVALID, "give attachedDocument or file, not both").AtField("file")
		}
	}
	return c
}
