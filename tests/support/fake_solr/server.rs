//! The HTTP side of the fake: the accept loop on its own runtime, reading a request into a
//! [`Req`] and recording it, basic auth as Solr's Jetty answers it, the fault layer in front of
//! the handlers, and writing the answer (whole, or cut off mid-body).

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;

use super::fault::{apply_prefix, injected_status, pick_fault, FaultKind};
use super::{cursor, handle, handle_guarded, Recorded, Req, Resp, Shared};

pub(super) async fn accept_loop(
    listener: std::net::TcpListener,
    shared: Arc<Shared>,
    mut shutdown: tokio::sync::oneshot::Receiver<()>,
) {
    let listener = tokio::net::TcpListener::from_std(listener).expect("tokio listener");
    loop {
        tokio::select! {
            _ = &mut shutdown => return,
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let shared = shared.clone();
                tokio::spawn(async move {
                    let svc = service_fn(move |req| serve(shared.clone(), req));
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), svc)
                        .await;
                });
            }
        }
    }
}

/// The error a service returns to make hyper close the connection without an answer.
#[derive(Debug)]
pub struct Dropped;

impl std::fmt::Display for Dropped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("connection dropped by an injected fault")
    }
}

impl std::error::Error for Dropped {}

/// A header a handler sets to have its answer's body sent chunked and the connection closed after
/// it, as Solr's servlet does to an error whose stack trace is longer than 64 KiB; never sent.
pub const CUT_HEADER: &str = "x-fake-solr-cut";

/// A body: whole, or sent and then broken off (see [`CUT_HEADER`]).
pub struct Answer {
    data: Option<Bytes>,
    cut: bool,
    /// A cut answer breaks off after this wait, so that hyper writes out what came before.
    pause: Option<std::pin::Pin<Box<tokio::time::Sleep>>>,
}

impl hyper::body::Body for Answer {
    type Data = Bytes;
    type Error = Dropped;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, Dropped>>> {
        if self.data.is_none() && self.cut {
            let pause = self
                .pause
                .get_or_insert_with(|| Box::pin(tokio::time::sleep(Duration::from_millis(50))));
            if std::future::Future::poll(pause.as_mut(), cx).is_pending() {
                return std::task::Poll::Pending;
            }
        }
        std::task::Poll::Ready(match self.data.take() {
            Some(data) => Some(Ok(hyper::body::Frame::data(data))),
            None if self.cut => Some(Err(Dropped)),
            None => None,
        })
    }

    fn is_end_stream(&self) -> bool {
        self.data.is_none() && !self.cut
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        match (&self.data, self.cut) {
            (Some(d), false) => hyper::body::SizeHint::with_exact(d.len() as u64),
            (None, false) => hyper::body::SizeHint::with_exact(0),
            _ => hyper::body::SizeHint::default(),
        }
    }
}

fn to_hyper(resp: Resp) -> hyper::Response<Answer> {
    let mut b = hyper::Response::builder()
        .status(resp.status)
        .header("Content-Type", resp.content_type);
    let mut cut = false;
    for (k, v) in resp.headers {
        if k == CUT_HEADER {
            cut = true;
        } else {
            b = b.header(k, v);
        }
    }
    let body = Answer {
        data: Some(Bytes::from(resp.body)),
        cut,
        pause: None,
    };
    b.body(body).expect("response")
}

fn set_status(shared: &Shared, index: usize, status: u16) {
    if let Some(r) = shared
        .requests
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_mut(index)
    {
        r.status = Some(status);
    }
}

fn percent_decode_path(p: &str) -> String {
    url::form_urlencoded::parse(format!("x={}", p.replace('+', "%2B")).as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_else(|| p.to_string())
}

async fn serve(
    shared: Arc<Shared>,
    req: hyper::Request<Incoming>,
) -> Result<hyper::Response<Answer>, Dropped> {
    let method = req.method().as_str().to_string();
    let full_path = percent_decode_path(req.uri().path());
    let query = req.uri().query().unwrap_or("").to_string();
    let header = |name: &str| {
        req.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(String::from)
    };
    let content_type = header("content-type");
    let authorization = header("authorization");
    let body = match req.into_body().collect().await {
        Ok(b) => b.to_bytes().to_vec(),
        Err(_) => return Err(Dropped),
    };
    let mut params: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    let is_form = content_type
        .as_deref()
        .is_some_and(|c| c.starts_with("application/x-www-form-urlencoded"));
    if is_form {
        params.extend(
            url::form_urlencoded::parse(&body).map(|(k, v)| (k.into_owned(), v.into_owned())),
        );
    }
    let core_prefix = format!("/solr/{}", shared.core_name);
    let (path, node_level) = match full_path.strip_prefix(&core_prefix) {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => (rest.to_string(), false),
        _ => (full_path.clone(), true),
    };
    let r = Req {
        method: method.clone(),
        path: path.clone(),
        node_level,
        params: params.clone(),
        body: body.clone(),
        content_type: content_type.clone(),
    };
    let index = {
        let mut log = shared.requests.lock().unwrap_or_else(|e| e.into_inner());
        log.push(Recorded {
            method,
            path,
            params,
            body,
            content_type,
            status: None,
        });
        log.len() - 1
    };

    if let Some(resp) = check_auth(&shared, &full_path, authorization.as_deref()) {
        set_status(&shared, index, resp.status);
        return Ok(to_hyper(resp));
    }

    let fault = pick_fault(&shared, &r);
    let resp = match fault {
        None => handle_guarded(&shared, &r),
        Some(entry) => match &entry.kind {
            FaultKind::Status(code) => {
                entry.state.hit();
                injected_status(*code)
            }
            FaultKind::Delay(d) => {
                entry.state.hit();
                tokio::time::sleep(*d).await;
                handle_guarded(&shared, &r)
            }
            FaultKind::Drop => {
                entry.state.hit();
                return Err(Dropped);
            }
            FaultKind::DropAfterApply => {
                let _ = handle(&shared, &r);
                entry.state.hit();
                return Err(Dropped);
            }
            FaultKind::GarbledAfterApply => {
                let _ = handle(&shared, &r);
                entry.state.hit();
                super::fault::garbled()
            }
            FaultKind::CutAfter(n) => {
                entry.state.hit();
                let mut resp = handle_guarded(&shared, &r);
                resp.body.truncate(*n);
                resp.headers.push((CUT_HEADER.to_owned(), "1".to_owned()));
                resp
            }
            FaultKind::Hook(f) => {
                let hook = f.lock().unwrap_or_else(|e| e.into_inner()).take();
                if let Some(hook) = hook {
                    hook(&mut shared.core());
                }
                entry.state.hit();
                handle_guarded(&shared, &r)
            }
            FaultKind::Hold(n) => {
                apply_prefix(&shared, &r, *n);
                let mut released = entry.state.released.subscribe();
                entry.state.hit();
                while !*released.borrow_and_update() {
                    if released.changed().await.is_err() {
                        break;
                    }
                }
                return Err(Dropped);
            }
        },
    };
    set_status(&shared, index, resp.status);
    Ok(to_hyper(resp))
}

fn check_auth(shared: &Shared, path: &str, header: Option<&str>) -> Option<Resp> {
    let (user, pass) = shared.auth.as_ref()?;
    let message = match header {
        None => "require authentication",
        Some(h) => {
            let mut parts = h.split_whitespace();
            let scheme = parts.next().unwrap_or("");
            if !scheme.eq_ignore_ascii_case("basic") {
                "require authentication"
            } else {
                match parts.next().and_then(cursor::base64_decode) {
                    None => "Malformed Basic Auth header",
                    Some(raw) => {
                        let text = String::from_utf8_lossy(&raw).to_string();
                        match text.split_once(':') {
                            None => "Invalid authentication token",
                            Some((u, p)) if u.trim() == user && p.trim() == pass => return None,
                            Some(_) => "Bad credentials",
                        }
                    }
                }
            }
        }
    };
    let body = format!(
        "<html>\n<head>\n<meta http-equiv=\"Content-Type\" content=\"text/html;charset=utf-8\"/>\n<title>Error 401 {message}</title>\n</head>\n<body><h2>HTTP ERROR 401 {message}</h2>\n<table>\n<tr><th>URI:</th><td>{path}</td></tr>\n<tr><th>STATUS:</th><td>401</td></tr>\n<tr><th>MESSAGE:</th><td>{message}</td></tr>\n<tr><th>SERVLET:</th><td>default</td></tr>\n</table>\n\n</body>\n</html>\n"
    );
    Some(Resp {
        status: 401,
        content_type: "text/html;charset=iso-8859-1".into(),
        body: body.into_bytes(),
        headers: vec![("WWW-Authenticate".into(), "Basic realm=\"solr\"".into())],
    })
}
