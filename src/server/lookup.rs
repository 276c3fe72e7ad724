//! `GET /api/lookup`: one page by its id or URL, with its flags, copy counts and groups in each
//! dimension (the page's lookup box reads the same through [`find_documents`]).

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::{error, sorted, AppState, ErrorBody, NO_INDEX};
use crate::browse::Found;

#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(super) struct LookupQuery {
    /// A document's id or its URL, exactly as the index holds it.
    q: String,
    /// How many members per group (10 unless given, at most 20).
    #[serde(default)]
    #[param(maximum = 20)]
    members: Option<usize>,
}

/// The documents whose id or URL is the query.
#[derive(Serialize, ToSchema)]
pub(super) struct LookupAnswer {
    q: String,
    /// None found: an empty list.
    documents: Vec<Found>,
}

/// The documents whose id or URL is `q`, or the status and message that say why not.
pub(crate) async fn find_documents(
    state: &AppState,
    q: &str,
    members: usize,
) -> Result<Vec<Found>, (StatusCode, String)> {
    if q.trim().is_empty() {
        return Err((
            StatusCode::BAD_REQUEST,
            "give a URL or an id: ?q=https://…".to_owned(),
        ));
    }
    let backend = state
        .backend
        .clone()
        .ok_or((StatusCode::SERVICE_UNAVAILABLE, NO_INDEX.to_owned()))?;
    backend
        .lookup(q, members.clamp(1, 20))
        .await
        .map_err(|e| (StatusCode::BAD_GATEWAY, e.message))
}

#[utoipa::path(get, path = "/api/lookup", params(LookupQuery), responses(
    (status = 200, description = "the documents with that id or URL (none: an empty list)", body = LookupAnswer),
    (status = 400, description = "refused", body = ErrorBody), (status = 401, description = "refused", body = ErrorBody),
    (status = 502, description = "refused", body = ErrorBody), (status = 503, description = "refused", body = ErrorBody),
))]
/// One page by its URL or id: its flags, copy counts and groups in each dimension.
pub(super) async fn lookup(
    State(state): State<Arc<AppState>>,
    query: Result<Query<LookupQuery>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let q = match query {
        Ok(Query(q)) => q,
        Err(e) => return error(StatusCode::BAD_REQUEST, &e.body_text()),
    };
    match find_documents(&state, &q.q, q.members.unwrap_or(10)).await {
        Ok(documents) => sorted(LookupAnswer { q: q.q, documents }).into_response(),
        Err((status, message)) => error(status, &message),
    }
}
