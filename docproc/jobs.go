package docproc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"shipgraph/db"
	"shipgraph/files"
	"shipgraph/jobs"
)

// Queue is the River queue of the document jobs.
const Queue = "documents"

// The steps a job runs.
const (
	// StepExtract reads the file's text, classifies it, extracts the
	// fields and links the document (upload, reextract).
	StepExtract = "extract"
	// StepClassify classifies the text extracted before (reclassify).
	StepClassify = "classify"
	// StepLink links by the text extracted before (relink).
	StepLink = "link"
	// StepRotate turns an image file (rotate).
	StepRotate = "rotate"
)

// JobArgs is one job on one document.
type JobArgs struct {
	AccountID  string `json:"account_id"`
	DocumentID string `json:"document_id"`
	Step       string `json:"step"`
	Degrees    int    `json:"degrees,omitempty"`
}

// Kind names the job in River's tables.
func (JobArgs) Kind() string { return "document_process" }

var waitingStates = []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending,
	rivertype.JobStateRetryable, rivertype.JobStateRunning, rivertype.JobStateScheduled}

// InsertOpts: a step waiting for a document stands for a second request
// of it (two reclassify clicks run once); rotations are not unique (two
// quarter turns are a half turn).
func (a JobArgs) InsertOpts() river.InsertOpts {
	o := river.InsertOpts{Queue: Queue, MaxAttempts: MaxAttempts}
	if a.Step != StepRotate {
		o.UniqueOpts = river.UniqueOpts{ByArgs: true, ByState: waitingStates}
	}
	return o
}

// MaxAttempts is how often River runs a job that fails (a file store or
// database error) before the document is recorded failed.
const MaxAttempts = 5

// Processor runs the document jobs on the process' job engine (package
// jobs), in the queue Queue.
type Processor struct {
	store *db.DB
	files *files.Store
	log   *slog.Logger
	jobs  *jobs.Engine
}

// New builds a processor over store and the file store fs (nil: every
// extraction fails as having no file) and registers its queue on the job
// engine j (before j opens): workers jobs at once in this process (0: it
// only enqueues).
func New(store *db.DB, fs *files.Store, j *jobs.Engine, workers int, log *slog.Logger) (*Processor, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Processor{store: store, files: fs, log: log, jobs: j}
	err := j.Register(jobs.Queue{Name: Queue, Workers: workers, Register: func(w *river.Workers) {
		river.AddWorker(w, river.WorkFunc(p.work))
	}})
	if err != nil {
		return nil, fmt.Errorf("docproc: %w", err)
	}
	return p, nil
}

// Enqueue inserts a job whose request wrote nothing (reclassify, relink,
// rotate).
func (p *Processor) Enqueue(ctx context.Context, a JobArgs) error {
	_, err := p.jobs.Insert(ctx, a, nil)
	return err
}

// EnqueueTx inserts a job in tx, the transaction that writes what it is
// about: it exists exactly when tx commits.
func (p *Processor) EnqueueTx(ctx context.Context, tx *sql.Tx, a JobArgs) error {
	_, err := p.jobs.InsertTx(ctx, tx, a, nil)
	return err
}

func (p *Processor) work(ctx context.Context, job *river.Job[JobArgs]) error {
	err := p.run(ctx, job.Args)
	if err == nil {
		return nil
	}
	last := job.Attempt >= job.MaxAttempts
	p.log.Warn("docproc: job failed", "document", job.Args.DocumentID, "step", job.Args.Step, "attempt", job.Attempt, "last", last, "err", err)
	if last && (job.Args.Step == StepExtract || job.Args.Step == StepClassify || job.Args.Step == StepLink) {
		// The end of the retries is the end of this extraction: say so
		// (document.extraction_failed) rather than stay pending.
		if rerr := p.store.RecordExtractionFailed(ctx, job.Args.AccountID, job.Args.DocumentID, "retries_exhausted: "+err.Error()); rerr != nil {
			return rerr
		}
	}
	return err
}

// run runs one step; an error is retried by River.
func (p *Processor) run(ctx context.Context, a JobArgs) error {
	t, err := p.store.DocumentTarget(ctx, a.AccountID, a.DocumentID)
	if err != nil || t == nil {
		return err // a deleted document: nothing to do
	}
	switch a.Step {
	case StepRotate:
		return p.rotate(ctx, t, a.Degrees)
	case StepClassify, StepLink:
		if t.Text == nil {
			return p.extract(ctx, t) // never extracted: everything at once
		}
		if a.Step == StepLink {
			_, err := p.store.LinkDocument(ctx, t.AccountID, t.ID, linksOf(FindReferences(*t.Text)))
			return err
		}
		return p.store.SaveClassification(ctx, t.AccountID, t.ID, classified(t, *t.Text, FindReferences(*t.Text)))
	case StepExtract:
		return p.extract(ctx, t)
	}
	return fmt.Errorf("docproc: unknown step %q", a.Step)
}

func (p *Processor) extract(ctx context.Context, t *db.DocumentTarget) error {
	if t.UploadKey == nil || p.files == nil {
		return p.store.RecordExtractionFailed(ctx, t.AccountID, t.ID, "no_file: the document has no stored file to read")
	}
	data, err := p.files.Read(ctx, *t.UploadKey)
	if err != nil {
		return fmt.Errorf("reading the file: %w", err)
	}
	ct := ""
	if t.ContentType != nil {
		ct = *t.ContentType
	}
	x, err := Extract(ct, data)
	if e, ok := IsNoText(err); ok {
		return p.store.RecordExtractionFailed(ctx, t.AccountID, t.ID, e.Error())
	} else if err != nil {
		return err
	}
	refs := FindReferences(x.Text)
	_, err = p.store.SaveExtraction(ctx, db.Extraction{AccountID: t.AccountID, DocumentID: t.ID, Text: x.Text, Extractor: x.Extractor,
		Classified: classified(t, x.Text, refs), Links: linksOf(refs)})
	return err
}

// classified classifies text; the fields follow the manual type when the
// document has one (the user knows better than the rules).
func classified(t *db.DocumentTarget, text string, refs References) db.Classified {
	c := Classify(text)
	typ := c.Type
	if t.DocumentTypeManual != nil && *t.DocumentTypeManual != "" {
		typ = *t.DocumentTypeManual
	}
	s := SchemaOf(typ)
	return db.Classified{DocumentType: c.Type, Notes: c.Notes, SchemaVersion: s.FullVersion(), Payload: ExtractFields(s.Type, text, refs)}
}

func linksOf(r References) db.DocumentLinks {
	return db.DocumentLinks{Numbers: r.Numbers(), Containers: r.Containers}
}

// errNotRotatable: the file changed type or vanished since the request.
var errNotRotatable = errors.New("the document's file is not a rotatable image")

func (p *Processor) rotate(ctx context.Context, t *db.DocumentTarget, degrees int) error {
	if t.UploadKey == nil || t.ContentType == nil || !Rotatable[*t.ContentType] || p.files == nil {
		p.log.Info("docproc: rotation skipped", "document", t.ID, "err", errNotRotatable)
		return nil
	}
	data, err := p.files.Read(ctx, *t.UploadKey)
	if err != nil {
		return fmt.Errorf("reading the file: %w", err)
	}
	out, err := Rotate(*t.ContentType, data, degrees)
	if err != nil {
		// An image that does not decode will not decode on a retry.
		p.log.Warn("docproc: rotation failed", "document", t.ID, "err", err)
		return nil
	}
	key := files.NewKey()
	sum, err := p.files.Write(ctx, key, *t.ContentType, int64(len(out)), bytesReader(out))
	if err != nil {
		return err
	}
	old, err := p.store.ReplaceDocumentFile(ctx, t.AccountID, t.ID, key, int64(len(out)), sum)
	if err != nil || old == "" {
		_ = p.files.Delete(context.WithoutCancel(ctx), key)
		return err
	}
	if err := p.files.Delete(ctx, old); err != nil {
		p.log.Warn("docproc: the unrotated file was not removed", "key", old, "err", err)
	}
	return nil
}
