//! The plugin's files against the worker's: its configset (`solr-plugin/conf`) is `schema/conf`
//! plus the signing chain, and its processor writes the in-place profile under the worker's names.

use super::{checkout_file, our_schema_xml, our_solrconfig_xml, read};

/// The plugin's configset (`solr-plugin/conf`) is this one plus the signing chain: the same schema,
/// and the same configuration once the chain and the opening comments are taken out.
#[test]
fn the_plugins_configset_is_this_one_with_the_chain() {
    assert_eq!(
        read(&checkout_file("solr-plugin/conf/managed-schema.xml")),
        our_schema_xml(),
        "solr-plugin/conf/managed-schema.xml must be schema/conf's: copy it over"
    );
    let plugin = read(&checkout_file("solr-plugin/conf/solrconfig.xml"));
    let after_opening_comment =
        |s: &str| s[s.find("-->").expect("an opening comment") + 3..].to_owned();
    let start = plugin
        .find("\n  <!-- Index-time signing")
        .expect("the chain's comment");
    let end = plugin
        .find("</updateRequestProcessorChain>\n")
        .expect("the chain")
        + "</updateRequestProcessorChain>\n".len();
    assert!(plugin[start..end].contains("org.solrdedup.SolrDedupUpdateProcessorFactory"));
    let without = format!("{}{}", &plugin[..start], &plugin[end..]);
    assert_eq!(
        after_opening_comment(&without),
        after_opening_comment(&our_solrconfig_xml()),
        "solr-plugin/conf/solrconfig.xml must be schema/conf's plus the chain"
    );
}

/// The plugin writes the in-place profile's first values under the worker's names.
#[test]
fn the_plugins_in_place_names_are_the_workers() {
    let java = read(&checkout_file(
        "solr-plugin/src/main/java/org/solrdedup/SolrDedupUpdateProcessorFactory.java",
    ));
    for (yacy, in_place) in solr_dedup::model::IN_PLACE_NAMES {
        let pair = format!("{{\"{yacy}\", \"{in_place}\"}}");
        assert!(java.contains(&pair), "the plugin lacks {pair}");
    }
    assert_eq!(
        java.matches("_unique_b\", \"").count() + java.matches("_copycount_i\", \"").count() + 1,
        solr_dedup::model::IN_PLACE_NAMES.len(),
        "the plugin's IN_PLACE_NAMES has other entries"
    );
}
