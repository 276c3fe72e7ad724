//! Throughput of the URL rules: a URL's canonical form, and a prediction against an index of
//! canonical forms, on 1,000 URLs of one site with a rule of every kind.
//!
//! The URLs are made here, the same on every run: a page id, some of them under `http://`, `www.`,
//! with a `;jsessionid=`, `index.html`, a session id, a default value or tracking parameters. Each
//! benchmark checks its output inside the loop against the value computed once before it.
//!
//! Run: `cargo bench --bench urlrules`; figures are recorded in `BENCHMARKS.md`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use solr_dedup::urlrules::predict::Index;
use solr_dedup::urlrules::{canonical, Evidence, ParamRule, Rules, SiteRules};

fn rules() -> Rules {
    let e = Evidence::new(200, 1);
    let mut site = SiteRules {
        scheme: Some(e),
        www: Some(e),
        param_order: Some(e),
        ..SiteRules::default()
    };
    site.path_params.insert("jsessionid".into(), e);
    site.default_documents.insert("index.html".into(), e);
    for p in [
        "sid",
        "utm_source",
        "utm_medium",
        "utm_campaign",
        "ref",
        "fbclid",
    ] {
        site.params.push(ParamRule::irrelevant(p, "/", e));
    }
    site.params
        .push(ParamRule::default_value("sort", "asc", "/", e));
    site.params
        .push(ParamRule::irrelevant("id", "/", Evidence::new(0, 300)));
    let mut r = Rules::default();
    r.sites.insert("shop.example".into(), site);
    r
}

fn urls() -> Vec<String> {
    (0..1000u32)
        .map(|i| {
            let scheme = if i % 3 == 0 { "http" } else { "https" };
            let www = if i % 4 == 0 { "www." } else { "" };
            let path = match i % 5 {
                0 => format!("/c/{}/index.html", i % 50),
                1 => format!("/c/{}/item;jsessionid=A{i:X}", i % 50),
                _ => format!("/c/{}/item", i % 50),
            };
            let query = match i % 6 {
                0 => format!("?id={i}&sid=s{i}"),
                1 => format!("?sort=asc&id={i}"),
                2 => format!("?id={i}&utm_source=mail&utm_medium=email&utm_campaign=c{i}"),
                3 => format!("?ref=feed&id={i}"),
                _ => format!("?id={i}"),
            };
            format!("{scheme}://{www}shop.example{path}{query}")
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let rules = rules();
    let urls = urls();
    let want: Vec<String> = urls
        .iter()
        .map(|u| canonical(u, &rules).unwrap().url)
        .collect();
    let mut group = c.benchmark_group("urlrules");
    group.throughput(Throughput::Elements(urls.len() as u64));
    group.bench_function("canonical", |b| {
        b.iter(|| {
            for (u, w) in urls.iter().zip(&want) {
                let got = canonical(black_box(u), &rules).unwrap();
                assert_eq!(&got.url, w);
            }
        })
    });
    let mut index = Index::new(rules.clone());
    for (i, u) in urls.iter().enumerate().step_by(2) {
        index.add(&format!("d{i}"), u).unwrap();
    }
    let hits: usize = urls
        .iter()
        .filter(|u| index.predict(u).unwrap().duplicate_of.is_some())
        .count();
    group.bench_function("predict", |b| {
        b.iter(|| {
            let mut n = 0;
            for u in &urls {
                n += usize::from(index.predict(black_box(u)).unwrap().duplicate_of.is_some());
            }
            assert_eq!(n, hits);
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
