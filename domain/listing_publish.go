package domain

// CodeAlreadyPublished is the listing publication's own error: a publish
// met the product's live publication on the store (its live index,
// declared with its status and help in kinds.ListingPublish.Conflict);
// ResourceID names the existing publication.
const CodeAlreadyPublished Code = "ALREADY_PUBLISHED"
