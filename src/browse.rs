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

use crate::engine::{deciding_rule, Preference, RankPrefix, UrlKeys};
use crate::model::Dimension;
use crate::model::FieldNames;
use crate::store::{Doc, FacetQuery, Filter, ReadQuery, Store, StoreError};
use crate::urlrules::Rules;

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
    /// Its rank under the run's preference order ([`explain`]), smaller first: rewrites to the
    /// canonical form, clutter, host, scheme, www, parameter order, URL length. Empty when not
    /// explained.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rank: Vec<u32>,
    /// For a member that is not the representative: the first rule of the order on which the
    /// stored representative and it differ, the rule that separated them (a representative stored
    /// under other settings may lose on it) (`canonical`, `clutter`, `host`, `scheme`, `www`, `param order`,
    /// `shorter`, `smaller url`, `id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub separated_by: Option<String>,
}

/// Fills each member's [`Member::rank`] and [`Member::separated_by`] under a preference order
/// (the one runs decide with) and its rules. Pure.
pub fn explain(view: &mut GroupView, pref: Preference, rules: Option<&Rules>) {
    let key = |m: &Member| {
        let keys = UrlKeys::new(m.url.as_deref());
        let prefix = RankPrefix::new(m.url.as_deref(), &keys, pref, rules);
        (prefix, keys.normalized)
    };
    let rep = view.representative.as_ref().map(|r| (key(r), r.id.clone()));
    let members = view.members.iter_mut().chain(view.representative.as_mut());
    for m in members {
        let ((prefix, normalized), id) = (key(m), m.id.clone());
        m.rank = prefix.parts().to_vec();
        m.separated_by = rep.as_ref().and_then(|((rp, rn), rid)| {
            (*rid != id).then(|| {
                deciding_rule(
                    (*rp, rn.as_deref(), rid),
                    (prefix, normalized.as_deref(), &id),
                )
                .name()
                .to_owned()
            })
        });
    }
}

/// The field a dimension's groups share, when it has one.
pub fn group_field(fields: &FieldNames, d: Dimension) -> Option<&str> {
    match d {
        Dimension::Near => Some(&fields.near_group),
        _ => fields.signature(d),
    }
}

/// The documents whose URL is on `host` (`http://HOST/…` or `https://HOST/…`, without a port): a
/// range from `SCHEME://HOST/` to `SCHEME://HOST0` (`0` follows `/`), which both stores compare as
/// strings and Solr gets quoted, never as query syntax.
pub fn on_host(url_field: &str, host: &str) -> Filter {
    let host = host.trim().to_ascii_lowercase();
    Filter::Or(
        ["http", "https"]
            .into_iter()
            .map(|scheme| Filter::Range {
                field: url_field.to_owned(),
                lo: Some(format!("{scheme}://{host}/")),
                hi: Some(format!("{scheme}://{host}0")),
            })
            .collect(),
    )
}

/// The `limit` biggest groups of `d` among the documents of `filter`, as the flags the last run wrote
/// tell them (size descending, then the field's order, as both stores give the facet's top values),
/// each with at most `members` members. `None` for a dimension without a group field.
///
/// With `within`, the groups with doubles among its documents, most there first: each group's size
/// and members are still the whole group's.
pub async fn biggest_groups<S: Store>(
    store: &S,
    fields: &FieldNames,
    filter: &Filter,
    d: Dimension,
    limit: usize,
    members: usize,
    within: Option<&Filter>,
) -> Result<Option<Vec<GroupView>>, StoreError> {
    let Some(field) = group_field(fields, d) else {
        return Ok(None);
    };
    let flag = fields.unique(d);
    let mut doubles = vec![
        filter.clone(),
        Filter::Term {
            field: flag.to_owned(),
            value: fields.flag_value(false).to_owned(),
        },
    ];
    doubles.extend(within.cloned());
    let doubles = Filter::And(doubles);
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
        unique: crate::engine::doc::get_bool(doc, flag),
        rank: Vec::new(),
        separated_by: None,
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
        let size = match within {
            None => b.count + 1,
            // The whole group's size, not only its doubles within.
            Some(_) => store
                .facet(&FacetQuery {
                    field: field.to_owned(),
                    filter: of_group.clone(),
                    mincount: 1,
                    limit: Some(1),
                })
                .await?
                .first()
                .map_or(b.count + 1, |whole| whole.count),
        };
        let representative = store
            .sample(&ReadQuery {
                filter: Filter::And(vec![
                    of_group.clone(),
                    Filter::Term {
                        field: flag.to_owned(),
                        value: fields.flag_value(true).to_owned(),
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
            size,
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

/// A document found by [`lookup`]: its flags, counts and groups in each dimension.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct Found {
    /// The document's id.
    pub id: String,
    /// Its URL.
    pub url: Option<String>,
    /// One entry per dimension, in [`Dimension::ALL`] order.
    pub dimensions: Vec<FoundDimension>,
}

/// A found document in one dimension.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct FoundDimension {
    /// The dimension.
    pub dimension: String,
    /// Its stored flag (`*_unique_b`, or `*_unique_i` under the in-place profile): true for a
    /// representative or a page without doubles.
    pub unique: Option<bool>,
    /// Its stored copy count (`*_copycount_i`, or `*_copies_i`), for exact, fuzzy and near.
    pub copycount: Option<i64>,
    /// Its group, when it shares the dimension's group field with other documents.
    pub group: Option<GroupView>,
}

/// The documents whose id or URL is `q` (at most a few), each with its flags, counts and groups in
/// every dimension (with at most `members` members each). Read only: one read for the documents,
/// then a count and a read per group. Values go through [`Filter::any_of`], which no store parses as
/// query syntax (Solr: `{!terms}`).
pub async fn lookup<S: Store>(
    store: &S,
    fields: &FieldNames,
    filter: &Filter,
    q: &str,
    members: usize,
) -> Result<Vec<Found>, StoreError> {
    let q = q.trim();
    if q.is_empty() {
        return Ok(Vec::new());
    }
    let mut fl = vec![fields.id.clone(), fields.url.clone()];
    for d in Dimension::ALL {
        fl.push(fields.unique(d).to_owned());
        fl.extend(fields.count(d).map(str::to_owned));
        fl.extend(group_field(fields, d).map(str::to_owned));
    }
    fl.dedup();
    let docs = store
        .sample(&ReadQuery {
            filter: Filter::And(vec![
                filter.clone(),
                Filter::Or(vec![
                    Filter::any_of(fields.id.clone(), vec![q.to_owned()]),
                    Filter::any_of(fields.url.clone(), vec![q.to_owned()]),
                ]),
            ]),
            fields: fl,
            rows: 5,
        })
        .await?;
    let mut out = Vec::with_capacity(docs.len());
    for doc in docs {
        let mut dimensions = Vec::new();
        for d in Dimension::ALL {
            let flag = fields.unique(d);
            let copycount = fields
                .count(d)
                .and_then(|f| doc.get(f))
                .and_then(Value::as_i64);
            // A stored count of 1 says the run left the page alone in the dimension, whatever it
            // shares: a fuzzy profile too weak to count (`--fuzzy-min-words`) is no group.
            let key = group_field(fields, d)
                .filter(|_| copycount.is_none_or(|n| n > 1))
                .and_then(|f| doc.get(f).filter(|v| !v.is_null()).map(|v| (f, text(v))));
            let group = match key {
                Some((field, key)) => {
                    group_of(store, fields, filter, flag, field, key, members).await?
                }
                None => None,
            };
            dimensions.push(FoundDimension {
                dimension: d.name().to_owned(),
                unique: crate::engine::doc::get_bool(&doc, flag),
                copycount,
                group,
            });
        }
        out.push(Found {
            id: doc.get(&fields.id).map(text).unwrap_or_default(),
            url: doc.get(&fields.url).map(text),
            dimensions,
        });
    }
    Ok(out)
}

/// The group of the documents whose `field` is `key`, when it has two or more.
async fn group_of<S: Store>(
    store: &S,
    fields: &FieldNames,
    filter: &Filter,
    flag: &str,
    field: &str,
    key: String,
    members: usize,
) -> Result<Option<GroupView>, StoreError> {
    let of_group = Filter::And(vec![
        filter.clone(),
        Filter::Term {
            field: field.to_owned(),
            value: key.clone(),
        },
    ]);
    let size = store
        .facet(&FacetQuery {
            field: field.to_owned(),
            filter: of_group.clone(),
            mincount: 1,
            limit: Some(1),
        })
        .await?
        .first()
        .map_or(0, |b| b.count);
    if size < 2 {
        return Ok(None);
    }
    let fl = vec![fields.id.clone(), fields.url.clone(), flag.to_owned()];
    let member = |doc: &Doc| Member {
        id: doc.get(&fields.id).map(text).unwrap_or_default(),
        url: doc.get(&fields.url).map(text),
        unique: crate::engine::doc::get_bool(doc, flag),
        rank: Vec::new(),
        separated_by: None,
    };
    let mut list: Vec<Member> = store
        .sample(&ReadQuery {
            filter: of_group,
            fields: fl,
            rows: members.max(1),
        })
        .await?
        .iter()
        .map(member)
        .collect();
    list.sort_by(|a, b| {
        (a.unique != Some(true), &a.url, &a.id).cmp(&(b.unique != Some(true), &b.url, &b.id))
    });
    let representative = list.iter().find(|m| m.unique == Some(true)).cloned();
    Ok(Some(GroupView {
        key,
        size,
        representative,
        members: list,
    }))
}

#[cfg(test)]
mod explain_tests {
    use super::*;
    use crate::engine::Order;

    fn m(id: &str, url: &str, unique: bool) -> Member {
        Member {
            id: id.into(),
            url: Some(url.into()),
            unique: Some(unique),
            rank: Vec::new(),
            separated_by: None,
        }
    }

    #[test]
    fn each_member_gets_its_rank_and_the_rule_that_put_the_representative_first() {
        let rep = m("b", "http://example.org/x", true);
        let mut g = GroupView {
            key: "1".into(),
            size: 4,
            representative: Some(rep.clone()),
            members: vec![
                rep,
                m("c", "https://EXAMPLE.org/x", false),
                m("a", "https://www.example.org/x?sid=abc", false),
                m("z", "http://example.org/x", false),
            ],
        };
        explain(&mut g, Preference::default(), None);
        let why: Vec<Option<&str>> = g
            .members
            .iter()
            .map(|m| m.separated_by.as_deref())
            .collect();
        // c: an upper-case host; a: a session id (clutter before scheme); z: the same URL, so
        // the id.
        assert_eq!(why, [None, Some("clutter"), Some("clutter"), Some("id")]);
        // rewrites, clutter (host case in the high byte), host, scheme, www, order, length.
        assert_eq!(g.members[0].rank, [0, 0, 0, 1, 1, 0, 20]);
        assert_eq!(g.members[1].rank, [0, 256, 0, 0, 1, 0, 21]);
        // Under YaCy's order the first rule on which b and c differ is the scheme (there c would
        // be the better one: the view names the rule, not who wins it).
        let yacy = Preference {
            order: Order::Yacy,
            ..Preference::default()
        };
        explain(&mut g, yacy, None);
        assert_eq!(g.members[1].separated_by.as_deref(), Some("scheme"));
        assert_eq!(g.members[0].rank, [0, 0, 0, 1, 1, 0, 20]);
    }
}
