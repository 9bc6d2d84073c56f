package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/oncehq/once/app"
	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/domain/model"
)

func outboxCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "outbox", Short: "Operate the outbox: dead letters and re-drive"}
	cmd.AddCommand(deadLettersCmd(), redriveCmd(), releaseCmd())
	return cmd
}

// deadLettersCmd lists a workspace's dead letters, one JSON line each or
// one per last error.
func deadLettersCmd() *cobra.Command {
	var workspace string
	var limit int
	var grouped bool
	list := leafCommand("dead-letters", "List a workspace's dead letters: undeliverable events and jobs given up on (JSON lines)", func(cmd *cobra.Command) error {
		ws, err := parseID("workspace", workspace)
		if err != nil {
			return err
		}
		return withAdmin(cmd.Context(), func(a *dispatch.Admin) error {
			events, err := a.ListDeadLetters(cmd.Context(), ws, limit)
			if err != nil {
				return err
			}
			return writeDeadLetters(json.NewEncoder(cmd.OutOrStdout()), events, grouped)
		})
	})
	list.Flags().StringVar(&workspace, "workspace", "", "workspace id")
	list.Flags().IntVar(&limit, "limit", 100, "at most this many")
	list.Flags().BoolVar(&grouped, "group", false, "one line per last error: count and event ids")
	_ = list.MarkFlagRequired("workspace")
	return list
}

// writeDeadLetters encodes one line per event, or, grouped, one per last
// error with its count and event ids.
func writeDeadLetters(enc *json.Encoder, events []model.OutboxEvent, grouped bool) error {
	if grouped {
		for _, g := range dispatch.GroupByError(events) {
			if err := enc.Encode(map[string]any{"last_error": g.LastError, "count": len(g.EventIDs), "event_ids": g.EventIDs}); err != nil {
				return err
			}
		}
		return nil
	}
	for _, e := range events {
		opID, _ := model.JobOperationID(e.Payload)
		if err := enc.Encode(map[string]any{
			"id": e.ID, "event_type": e.Type, "aggregate_type": e.AggregateType, "aggregate_id": e.AggregateID,
			"operation_id": opID, "stage": dispatch.Stage(e),
			"attempt_count": e.AttemptCount, "last_error": e.LastError, "created_at": e.CreatedAt,
		}); err != nil {
			return err
		}
	}
	return nil
}

// redriveCmd returns dead-lettered events of a workspace to pending.
func redriveCmd() *cobra.Command {
	var workspace string
	var ids []string
	var all bool
	redrive := leafCommand("redrive", "Return dead-lettered events to pending, reopening jobs given up on (--id, repeatable, or --all)", func(cmd *cobra.Command) error {
		ws, err := parseID("workspace", workspace)
		if err != nil {
			return err
		}
		if all == (len(ids) > 0) {
			return fmt.Errorf("give either --id (one or more) or --all")
		}
		var parsed []uuid.UUID
		for _, s := range ids {
			id, err := parseID(fmt.Sprintf("id %q", s), s)
			if err != nil {
				return err
			}
			parsed = append(parsed, id)
		}
		return withAdmin(cmd.Context(), func(a *dispatch.Admin) error {
			n, err := a.Redrive(cmd.Context(), ws, parsed)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "redriven: %d\n", n)
			return nil
		})
	})
	redrive.Flags().StringVar(&workspace, "workspace", "", "workspace id")
	redrive.Flags().StringSliceVar(&ids, "id", nil, "event id (repeatable)")
	redrive.Flags().BoolVar(&all, "all", false, "every dead-lettered event of the workspace")
	_ = redrive.MarkFlagRequired("workspace")
	return redrive
}

// releaseCmd retires dead letters of jobs given up on without running them
// again, so that the ordering keys they hold go on (dispatch.Admin.Release).
func releaseCmd() *cobra.Command {
	var workspace string
	var ids []string
	release := leafCommand("release", "Retire dead-lettered jobs given up on without re-driving them, letting their ordering keys' later jobs go (--id, repeatable)", func(cmd *cobra.Command) error {
		ws, err := parseID("workspace", workspace)
		if err != nil {
			return err
		}
		var parsed []uuid.UUID
		for _, s := range ids {
			id, err := parseID(fmt.Sprintf("id %q", s), s)
			if err != nil {
				return err
			}
			parsed = append(parsed, id)
		}
		return withAdmin(cmd.Context(), func(a *dispatch.Admin) error {
			n, err := a.Release(cmd.Context(), ws, parsed)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "released: %d\n", n)
			return nil
		})
	})
	release.Flags().StringVar(&workspace, "workspace", "", "workspace id")
	release.Flags().StringSliceVar(&ids, "id", nil, "event id (repeatable)")
	_ = release.MarkFlagRequired("workspace")
	_ = release.MarkFlagRequired("id")
	return release
}

// withAdmin starts the storage without servers and hands over the outbox
// admin use case.
func withAdmin(ctx context.Context, fn func(*dispatch.Admin) error) error {
	return withUseCase(ctx, func(cfg app.Config) error {
		if cfg.Embedded() {
			return fmt.Errorf("set DATABASE_URL: the embedded store of a running `once serve` is not reachable from another process")
		}
		return nil
	}, fn)
}
