package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
)

// Member is a user's membership of the workspace.
type Member struct {
	UserID    uuid.UUID `json:"user_id" format:"uuid" doc:"The user's id in your identity provider"`
	Role      string    `json:"role" enum:"admin,member" doc:"admin: manages members and dead letters; member: everything else"`
	CreatedAt time.Time `json:"created_at"`
}

type MemberList struct {
	Items []Member `json:"items" doc:"Every member, oldest first"`
}

type AddMemberRequest struct {
	UserID uuid.UUID `json:"user_id" format:"uuid" doc:"The user's id in your identity provider"`
	Role   string    `json:"role" enum:"admin,member"`
}

type AddMemberInput struct {
	Body AddMemberRequest
}

type MemberOutput struct {
	Body Member
}

type MemberListOutput struct {
	Body MemberList
}

type RemoveMemberInput struct {
	UserID uuid.UUID `path:"user_id" format:"uuid" doc:"The member's user id"`
}

type NoContent struct{}

func toMember(m model.Member) Member {
	return Member{UserID: m.UserID, Role: string(m.Role), CreatedAt: m.CreatedAt}
}

func (h *handlers) registerMembers(api huma.API) {
	huma.Register(api, huma.Operation{
		OperationID: "listMembers", Method: http.MethodGet, Path: "/v1/members",
		Summary: "List the workspace's members", Description: "Workspace admins only.",
		Tags: []string{"workspace"}, Security: bearer, Errors: []int{401, 403, 500, 503},
	}, h.listMembers)
	huma.Register(api, huma.Operation{
		OperationID: "addMember", Method: http.MethodPost, Path: "/v1/members", DefaultStatus: http.StatusCreated,
		Summary:     "Add a member",
		Description: "Workspace admins only. A user who is already a member gets 409 CONFLICT with the user id in resource_id; retrying an add is therefore safe.",
		Tags:        []string{"workspace"}, Security: bearer, Errors: []int{401, 403, 409, 422, 500, 503},
	}, h.addMember)
	huma.Register(api, huma.Operation{
		OperationID: "removeMember", Method: http.MethodDelete, Path: "/v1/members/{user_id}", DefaultStatus: http.StatusNoContent,
		Summary:     "Remove a member",
		Description: "Workspace admins only. The last admin cannot be removed (409 INVALID_STATE). A member already removed gets 404.",
		Tags:        []string{"workspace"}, Security: bearer, Errors: []int{401, 403, 404, 409, 500, 503},
	}, h.removeMember)
}

func (h *handlers) listMembers(ctx context.Context, _ *struct{}) (*MemberListOutput, error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	ms, err := h.deps.Workspaces.ListMembers(ctx, p)
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	out := &MemberListOutput{Body: MemberList{Items: make([]Member, 0, len(ms))}}
	for _, m := range ms {
		out.Body.Items = append(out.Body.Items, toMember(m))
	}
	return out, nil
}

func (h *handlers) addMember(ctx context.Context, in *AddMemberInput) (*MemberOutput, error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	m, err := h.deps.Workspaces.AddMember(ctx, p, in.Body.UserID, model.Role(in.Body.Role))
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	return &MemberOutput{Body: toMember(m)}, nil
}

func (h *handlers) removeMember(ctx context.Context, in *RemoveMemberInput) (*NoContent, error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	if err := h.deps.Workspaces.RemoveMember(ctx, p, in.UserID); err != nil {
		return nil, toProblem(ctx, err)
	}
	return &NoContent{}, nil
}
