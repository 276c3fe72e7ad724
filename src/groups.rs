//! The biggest groups of a dimension, as a person looks at them (`serve`'s admin page and API): the
//! groups as the last run left them in the index, with the representative its flags name and a few
//! members.
//!
//! A group is found by its doubles: the documents whose flag the run set to false, counted per value
//! of the field the dimension groups by (its signature, or the near group id). A group's size is its
//! doubles plus its representative, the one member whose flag is true. Documents a dimension leaves
//! out (an empty text in `exact`) keep a true flag and never show as a group, as in the run's report.
//! Under `--scope host` a signature shared by groups on several hosts shows as one group.
//!
//! Read only, and light: one facet over the group field, then two small reads per group listed (its
//! representative, and its first few members). The `www` and `http` dimensions key their groups by a
//! URL form that no field stores, and their groups hold at most two and four documents, so they
//! have no biggest groups to list.

use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use crate::model::Dimension;
use crate::model::FieldNames;
use crate::store::{Doc, FacetQuery, Filter, ReadQuery, Store, StoreError};

/// One group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct GroupView {
    /// The value the group shares (a signature, or a near group id), as the index holds it.
    pub key: String,
    /// Its members: its doubles and its representative.
    pub size: u64,
    /// The member whose flag is true, if the index has one (none until a run decided the group).
    pub representative: Option<Member>,
    /// The first few members, the representative first when it is among them.
    pub members: Vec<Member>,
}

/// A member of a group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct Member {
    /// The document's id.
    pub id: String,
    /// Its URL.
    pub url: Option<String>,
    /// Its stored flag in the dimension.
    pub unique: Option<bool>,
}

/// The field a dimension's groups share, when it has one.
pub fn group_field(fields: &FieldNames, d: Dimension) -> Option<&str> {
    match d {
        Dimension::Near => Some(&fields.near_group),
        _ => fields.signature(d),
    }
}

/// The `limit` biggest groups of `d` among the documents of `filter`, as the flags the last run wrote
/// tell them (size descending, then the field's order, as both stores give the facet's top values),
/// each with at most `members` members. `None` for a dimension without a group field.
pub async fn biggest_groups<S: Store>(
    store: &S,
    fields: &FieldNames,
    filter: &Filter,
    d: Dimension,
    limit: usize,
    members: usize,
) -> Result<Option<Vec<GroupView>>, StoreError> {
    let Some(field) = group_field(fields, d) else {
        return Ok(None);
    };
    let flag = fields.unique(d);
    let doubles = Filter::And(vec![
        filter.clone(),
        Filter::Term {
            field: flag.to_owned(),
            value: "false".to_owned(),
        },
    ]);
    let buckets = store
        .facet(&FacetQuery {
            field: field.to_owned(),
            filter: doubles,
            mincount: 1,
            limit: Some(limit),
        })
        .await?;
    let fl = vec![fields.id.clone(), fields.url.clone(), flag.to_owned()];
    let member = |doc: &Doc| Member {
        id: doc.get(&fields.id).map(text).unwrap_or_default(),
        url: doc.get(&fields.url).map(text),
        unique: doc.get(flag).and_then(Value::as_bool),
    };
    let mut out = Vec::with_capacity(buckets.len());
    for b in buckets {
        let key = text(&b.value);
        let of_group = Filter::And(vec![
            filter.clone(),
            Filter::Term {
                field: field.to_owned(),
                value: key.clone(),
            },
        ]);
        let representative = store
            .sample(&ReadQuery {
                filter: Filter::And(vec![
                    of_group.clone(),
                    Filter::Term {
                        field: flag.to_owned(),
                        value: "true".to_owned(),
                    },
                ]),
                fields: fl.clone(),
                rows: 1,
            })
            .await?
            .first()
            .map(member);
        let mut list: Vec<Member> = store
            .sample(&ReadQuery {
                filter: of_group,
                fields: fl.clone(),
                rows: members.max(1),
            })
            .await?
            .iter()
            .map(member)
            .collect();
        list.sort_by(|a, b| {
            (a.unique != Some(true), &a.url, &a.id).cmp(&(b.unique != Some(true), &b.url, &b.id))
        });
        list.truncate(members);
        out.push(GroupView {
            key,
            size: b.count + 1,
            representative,
            members: list,
        });
    }
    Ok(Some(out))
}

/// A JSON value as Solr would print it in a query: strings without quotes.
fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
