//! The update chain a core's `/update` runs, as the Config API gives it
//! (`GET <core>/config/updateRequestProcessorChain` and `/config/requestHandler`): the worker's
//! atomic updates go through it, so a processor there can change what an update keeps.
//!
//! Which chain `/update` runs, as Solr decides it: the `update.chain` of the handler's `invariants`
//! or `defaults` (or of an `initParams` whose `path` covers `/update`), else the chain marked
//! `default="true"`, else one without a name, else Solr's implicit chain (logging and running,
//! nothing that touches a field). A chain's processors are its own, under the key `""`, and those
//! it names with `processor="a,b"` and `post-processor="c"`, declared once as `<updateProcessor>`
//! (`GET <core>/config/updateProcessor`, by name). A `useParams` paramset is not read. Solr 9's
//! answers (recorded from the test framework's core, tests/solr):
//!
//! ```json
//! {"config": {"updateRequestProcessorChain": [{"name": "dedupe", "default": "true",
//!   "": [{"class": "solr.processor.SignatureUpdateProcessorFactory", "fields": "text_t", …},
//!        {"class": "solr.RunUpdateProcessorFactory"}]}]}}
//! {"config": {"updateRequestProcessorChain": [{"name": "refd", "default": "true",
//!   "processor": "uuid,signature", "post-processor": "uuid", "": [{"class": "solr.LogUpdateProcessorFactory"}, …]}]}}
//! {"config": {"updateProcessor": {"signature": {"name": "signature",
//!   "class": "solr.processor.SignatureUpdateProcessorFactory", "fields": "text_t", …}}}}
//! ```
//!
//! (`null` when solrconfig.xml defines no chain.)

use serde_json::{Map, Value};

use super::{Client, SolrError};

/// One processor of a chain: its class as configured and its parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct Processor {
    /// The class as written in solrconfig.xml (`solr.processor.SignatureUpdateProcessorFactory`).
    pub class: String,
    /// Its other parameters as the Config API gives them.
    pub params: Map<String, Value>,
}

impl Processor {
    /// The class's simple name (`SignatureUpdateProcessorFactory`).
    pub fn simple_name(&self) -> &str {
        self.class.rsplit('.').next().unwrap_or(&self.class)
    }

    /// A parameter as a list of strings (a string, or an array of strings).
    pub fn strings(&self, key: &str) -> Vec<String> {
        match self.params.get(key) {
            Some(Value::String(s)) => s
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect(),
            Some(Value::Array(a)) => a
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// The chain `/update` runs.
#[derive(Debug, Clone, PartialEq)]
pub struct UpdateChain {
    /// Its name (`None`: an unnamed chain).
    pub name: Option<String>,
    /// Its processors, in order.
    pub processors: Vec<Processor>,
}

impl UpdateChain {
    /// The chain the core's `/update` runs; `None` when it is Solr's implicit one.
    pub async fn fetch(client: &Client) -> Result<Option<UpdateChain>, SolrError> {
        let chains = client
            .get("config/updateRequestProcessorChain", Vec::new())
            .await?;
        let handler = client
            .get(
                "config/requestHandler",
                vec![("componentName".to_owned(), "/update".to_owned())],
            )
            .await?;
        let init = client.get("config/initParams", Vec::new()).await?;
        let declared = client.get("config/updateProcessor", Vec::new()).await?;
        Ok(Self::of(&chains, &handler, &init, &declared))
    }

    /// [`UpdateChain::fetch`]'s choice from the four answers.
    pub fn of(
        chains: &Value,
        handler: &Value,
        init: &Value,
        declared: &Value,
    ) -> Option<UpdateChain> {
        let list = chains
            .pointer("/config/updateRequestProcessorChain")?
            .as_array()?;
        let named = ["invariants", "defaults"]
            .iter()
            .find_map(|part| {
                handler
                    .pointer(&format!(
                        "/config/requestHandler/~1update/{part}/update.chain"
                    ))
                    .and_then(Value::as_str)
            })
            .or_else(|| init_chain(init));
        let chain = match named {
            Some(name) => list
                .iter()
                .find(|c| c.get("name").and_then(Value::as_str) == Some(name)),
            None => list
                .iter()
                .find(|c| {
                    matches!(c.get("default"), Some(Value::Bool(true)))
                        || c.get("default")
                            .and_then(Value::as_str)
                            .is_some_and(|d| d.eq_ignore_ascii_case("true"))
                })
                .or_else(|| list.iter().find(|c| c.get("name").is_none())),
        }?;
        let processor = |p: &Map<String, Value>| {
            let mut params = p.clone();
            let class = params
                .remove("class")
                .and_then(|c| c.as_str().map(str::to_owned))
                .unwrap_or_default();
            params.remove("name");
            Processor { class, params }
        };
        // Those it names (declared once as <updateProcessor>), then its own, then its
        // post-processors: what the check looks for is where they are, not their order.
        let by_name = |key: &str| -> Vec<Processor> {
            let names = chain.get(key).and_then(Value::as_str).unwrap_or("");
            names
                .split(',')
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .filter_map(|n| {
                    declared
                        .pointer("/config/updateProcessor")
                        .and_then(|d| d.get(n))
                        .and_then(Value::as_object)
                })
                .map(processor)
                .collect()
        };
        let own: Vec<Processor> = chain
            .get("")
            .and_then(Value::as_array)
            .map(|ps| {
                ps.iter()
                    .filter_map(Value::as_object)
                    .map(processor)
                    .collect()
            })
            .unwrap_or_default();
        let mut processors = by_name("processor");
        processors.extend(own);
        processors.extend(by_name("post-processor"));
        Some(UpdateChain {
            name: chain.get("name").and_then(Value::as_str).map(str::to_owned),
            processors,
        })
    }
}

/// The `update.chain` an `initParams` gives the paths that cover `/update`.
fn init_chain(init: &Value) -> Option<&str> {
    let entries = init.pointer("/config/initParams")?.as_array()?;
    entries.iter().find_map(|e| {
        let path = e.get("path").and_then(Value::as_str)?;
        let covers = path.split(',').any(|p| {
            matches!(
                p.trim(),
                "/update" | "/update/*" | "/update/**" | "/*" | "/**"
            )
        });
        covers
            .then(|| e.pointer("/defaults/update.chain").and_then(Value::as_str))
            .flatten()
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Solr 9.10's answer for a configset with two chains, `dedupe` the default (recorded from the
    /// test framework's core, tests/solr).
    fn recorded() -> Value {
        json!({"responseHeader": {"status": 0, "QTime": 11}, "config": {"updateRequestProcessorChain": [
            {"default": "true", "name": "dedupe", "": [
                {"class": "solr.processor.SignatureUpdateProcessorFactory", "signatureField": "signature_s",
                 "fields": "text_t", "signatureClass": "solr.processor.Lookup3Signature",
                 "enabled": true, "overwriteDupes": false},
                {"class": "solr.LogUpdateProcessorFactory"},
                {"class": "solr.RunUpdateProcessorFactory"}]},
            {"name": "other", "": [
                {"class": "solr.UUIDUpdateProcessorFactory"},
                {"class": "solr.RunUpdateProcessorFactory"}]}]}})
    }

    fn plain_handler() -> Value {
        json!({"config": {"requestHandler": {"/update": {"useParams": "_UPDATE",
            "class": "solr.UpdateRequestHandler", "name": "/update"}}}})
    }

    #[test]
    fn the_default_chain_is_the_one_marked_default() {
        let chain = UpdateChain::of(&recorded(), &plain_handler(), &json!({}), &json!({})).unwrap();
        assert_eq!(chain.name.as_deref(), Some("dedupe"));
        let sig = &chain.processors[0];
        assert_eq!(sig.simple_name(), "SignatureUpdateProcessorFactory");
        assert_eq!(sig.strings("fields"), ["text_t"]);
        assert_eq!(sig.params["enabled"], json!(true));
        assert_eq!(chain.processors.len(), 3);
    }

    #[test]
    fn a_chain_named_by_the_handler_or_init_params_wins() {
        let handler = json!({"config": {"requestHandler": {"/update": {
            "class": "solr.UpdateRequestHandler", "defaults": {"update.chain": "other"}}}}});
        let chain = UpdateChain::of(&recorded(), &handler, &json!({}), &json!({})).unwrap();
        assert_eq!(chain.name.as_deref(), Some("other"));
        for path in ["/update/**", "/update/*", "/*"] {
            let init = json!({"config": {"initParams": [
                {"path": "/select", "defaults": {"update.chain": "dedupe"}},
                {"path": path, "defaults": {"update.chain": "other"}}]}});
            let chain = UpdateChain::of(&recorded(), &plain_handler(), &init, &json!({})).unwrap();
            assert_eq!(chain.name.as_deref(), Some("other"), "{path}");
        }
        // invariants before defaults.
        let handler = json!({"config": {"requestHandler": {"/update": {
            "invariants": {"update.chain": "dedupe"}, "defaults": {"update.chain": "other"}}}}});
        let chain = UpdateChain::of(&recorded(), &handler, &json!({}), &json!({})).unwrap();
        assert_eq!(chain.name.as_deref(), Some("dedupe"));
    }

    #[test]
    fn no_chain_is_solrs_implicit_one() {
        let none = json!({"config": {"updateRequestProcessorChain": null}});
        assert_eq!(
            UpdateChain::of(&none, &plain_handler(), &json!({}), &json!({})),
            None
        );
        // Chains, none of them the default nor unnamed: /update runs the implicit chain.
        let only_named = json!({"config": {"updateRequestProcessorChain": [
            {"name": "x", "": [{"class": "solr.RunUpdateProcessorFactory"}]}]}});
        assert_eq!(
            UpdateChain::of(&only_named, &plain_handler(), &json!({}), &json!({})),
            None
        );
    }

    /// Solr 9.10's answers for a chain that names processors declared once as <updateProcessor>
    /// (the `_default` configset's way), with an initParams for /update/* (recorded).
    #[test]
    fn processors_named_by_a_chain_are_found_where_they_are_declared() {
        let chains = json!({"config": {"updateRequestProcessorChain": [{"default": "true",
            "name": "refd", "post-processor": "uuid", "processor": "uuid,signature",
            "": [{"class": "solr.LogUpdateProcessorFactory"}, {"class": "solr.RunUpdateProcessorFactory"}]}]}});
        let declared = json!({"config": {"updateProcessor": {
            "signature": {"name": "signature", "class": "solr.processor.SignatureUpdateProcessorFactory",
                          "signatureField": "signature_s", "fields": "text_t", "enabled": true,
                          "overwriteDupes": false},
            "uuid": {"name": "uuid", "class": "solr.UUIDUpdateProcessorFactory"}}}});
        let init = json!({"config": {"initParams": [{"path": "/update/*",
            "defaults": {"update.chain": "refd"}}]}});
        let chain = UpdateChain::of(&chains, &plain_handler(), &init, &declared).unwrap();
        let names: Vec<&str> = chain
            .processors
            .iter()
            .map(Processor::simple_name)
            .collect();
        assert_eq!(
            names,
            [
                "UUIDUpdateProcessorFactory",
                "SignatureUpdateProcessorFactory",
                "LogUpdateProcessorFactory",
                "RunUpdateProcessorFactory",
                "UUIDUpdateProcessorFactory"
            ]
        );
        assert_eq!(chain.processors[1].strings("fields"), ["text_t"]);
        assert!(!chain.processors[1].params.contains_key("name"));
    }
}
