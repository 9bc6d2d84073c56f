package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
)

// The media of one transaction (sql/003_task_tables.sql), with their row
// model and the statements whose correctness depends on the exact SQL.
// As in repositories.go, every query names the transaction's workspace
// besides row-level security; placeholders are bun's '?'.

func (r *MediaRepository) Create(ctx context.Context, m model.Media) error {
	return r.insert(ctx, toMediaRow(m))
}

var updateMedia = updateTaskRow("media", "status = ?", "variants = ?::jsonb", "reason = ?")

func (r *MediaRepository) Update(ctx context.Context, m model.Media) error {
	variants, err := json.Marshal(toMediaVariants(m.Variants))
	if err != nil {
		return domain.Wrap(domain.CodeInternal, err, "media variants")
	}
	return r.update(ctx, updateMedia,
		string(m.Status), string(variants), strPtr(m.Reason), timePtr(m.UpdatedAt), r.workspace, m.ID)
}

func (r *MediaRepository) Transition(ctx context.Context, id uuid.UUID, from, to model.MediaStatus, at time.Time) error {
	res, err := r.db.ExecContext(ctx, transitionMedia, string(to), timePtr(at), r.workspace, id, string(from))
	return r.changedFrom(ctx, res, err, id, from)
}

func (r *MediaRepository) Delete(ctx context.Context, id uuid.UUID, from model.MediaStatus) error {
	res, err := r.db.ExecContext(ctx, deleteMedia, r.workspace, id, string(from))
	return r.changedFrom(ctx, res, err, id, from)
}

// changedFrom is the answer of a statement on media id guarded by
// "status = from": nil if it matched the row, otherwise why not (absent,
// or in another status, which selectMediaStatus tells apart).
func (r *MediaRepository) changedFrom(ctx context.Context, res sql.Result, err error, id uuid.UUID, from model.MediaStatus) error {
	if err != nil {
		return mapError(err, "media")
	}
	if n, err := res.RowsAffected(); err != nil || n == 1 {
		return mapError(err, "media")
	}
	var current string
	if err := r.db.NewRaw(selectMediaStatus, r.workspace, id).Scan(ctx, &current); err != nil {
		return mapError(err, "media")
	}
	return domain.Errorf(domain.CodeInvalidState, "media %s is %s, not %s", id, current, from)
}

// transitionMedia moves a media to a new status only from the status the
// caller saw, in one statement: a plain read (Get) takes no lock, so two
// requests could both see the old status. Under READ COMMITTED a concurrent
// transition of the same row makes this one wait for it and then re-check
// "status = ?" on the new row version, so of two transitions out of one
// status exactly one matches. No row: absent or in another status, which
// selectMediaStatus tells apart.
const transitionMedia = `
UPDATE media
   SET status = ?, updated_at = coalesce(?::timestamptz, now())
 WHERE workspace_id = ? AND id = ? AND status = ?`

// deleteMedia is transitionMedia's compare-and-set for a removal: a
// concurrent transition of the row makes it wait and re-check the status,
// and a transition waiting for it finds no row.
const deleteMedia = `DELETE FROM media WHERE workspace_id = ? AND id = ? AND status = ?`

// AwaitingUploadSince locks what it returns (FOR UPDATE), so the
// clean-up's transition of each cannot interleave with a Complete; rows a
// Complete holds are skipped, and the next pass sees them again if they
// still await their upload.
func (r *MediaRepository) AwaitingUploadSince(ctx context.Context, before time.Time, limit int) ([]model.Media, error) {
	if limit <= 0 {
		return nil, nil
	}
	var rows []mediaRow
	err := r.db.NewSelect().Model(&rows).
		Where("workspace_id = ?", r.workspace).
		Where("status = ?", string(model.MediaAwaitingUpload)).
		Where("created_at < ?", before).
		OrderExpr("created_at").Limit(int64(limit)).
		For("UPDATE SKIP LOCKED").Scan(ctx)
	if err != nil {
		return nil, mapError(err, "media")
	}
	out := make([]model.Media, 0, len(rows))
	for i := range rows {
		out = append(out, rows[i].domain())
	}
	return out, nil
}

const selectMediaStatus = `SELECT status FROM media WHERE workspace_id = ? AND id = ?`

// mediaVariantJSON is one element of media.variants. Its field names are
// the stored format: never rename them without a migration.
type mediaVariantJSON struct {
	Name      string `json:"name"`
	ObjectKey string `json:"object_key"`
	SizeBytes int64  `json:"size_bytes"`
}

type mediaRow struct {
	bun.BaseModel `bun:"table:media"`

	rowKeys
	Filename    string             `bun:"filename,notnull"`
	ContentType string             `bun:"content_type,notnull"`
	SizeBytes   int64              `bun:"size_bytes,notnull"`
	SHA256      *string            `bun:"sha256"`
	ObjectKey   string             `bun:"object_key,notnull"`
	Status      string             `bun:"status,notnull"`
	Variants    []mediaVariantJSON `bun:"variants,type:jsonb,notnull"`
	taskTimes
}

func toMediaVariants(vs []model.MediaVariant) []mediaVariantJSON {
	out := make([]mediaVariantJSON, 0, len(vs)) // never nil: JSON [] not null
	for _, v := range vs {
		out = append(out, mediaVariantJSON(v))
	}
	return out
}

func toMediaRow(m model.Media) *mediaRow {
	return &mediaRow{
		rowKeys: rowKeys{m.ID, m.WorkspaceID}, Filename: m.Filename, ContentType: m.ContentType,
		SizeBytes: m.SizeBytes, SHA256: strPtr(m.SHA256), ObjectKey: m.ObjectKey, Status: string(m.Status), Variants: toMediaVariants(m.Variants),
		taskTimes: toTaskTimes(m.Reason, m.CreatedAt, m.UpdatedAt),
	}
}

func (r *mediaRow) domain() model.Media {
	var vs []model.MediaVariant
	for _, v := range r.Variants {
		vs = append(vs, model.MediaVariant(v))
	}
	return model.Media{
		ID: r.ID, WorkspaceID: r.WorkspaceID, Filename: r.Filename, ContentType: r.ContentType,
		SizeBytes: r.SizeBytes, SHA256: strVal(r.SHA256), ObjectKey: r.ObjectKey, Status: model.MediaStatus(r.Status), Variants: vs,
		Reason: strVal(r.Reason), CreatedAt: timeVal(r.CreatedAt), UpdatedAt: timeVal(r.UpdatedAt),
	}
}
