package postgres

import (
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
)

// uuidCodec is pgx's codec of the uuid type, which also encodes a
// uuid.UUID parameter as what it is. pgx's own sees a driver.Valuer: it
// takes the text Value gives, fails to plan that text in the binary
// format, and scans it back into bytes, at every parameter (a plan that
// failed is not kept): 20 allocations and a few microseconds each, several
// parameters a statement, and the planning's deep frames grew the job's
// goroutine stack (runtime.copystack), most of a tenth of a worker's CPU
// per job. pgxUUID does the same at the few call sites that knew; this is
// every statement's.
type uuidCodec struct{ pgtype.UUIDCodec }

// withUUIDCodec registers uuidCodec for the uuid type in m (a
// connection's type map).
func withUUIDCodec(m *pgtype.Map) {
	t, ok := m.TypeForOID(pgtype.UUIDOID)
	if !ok {
		return
	}
	m.RegisterType(&pgtype.Type{Name: t.Name, OID: t.OID, Codec: uuidCodec{}})
}

func (c uuidCodec) PlanEncode(m *pgtype.Map, oid uint32, format int16, value any) pgtype.EncodePlan {
	if _, ok := value.(uuid.UUID); ok {
		switch format {
		case pgtype.BinaryFormatCode:
			return encodeUUIDBinary{}
		case pgtype.TextFormatCode:
			return encodeUUIDText{}
		}
	}
	return c.UUIDCodec.PlanEncode(m, oid, format, value)
}

type encodeUUIDBinary struct{}

func (encodeUUIDBinary) Encode(value any, buf []byte) ([]byte, error) {
	id := value.(uuid.UUID)
	return append(buf, id[:]...), nil
}

type encodeUUIDText struct{}

func (encodeUUIDText) Encode(value any, buf []byte) ([]byte, error) {
	return append(buf, value.(uuid.UUID).String()...), nil
}
