//! The endpoints' responses: JSON, plain text, and `202 Accepted` for a change the member was asked to make.

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::{Response, StatusCode};

pub(super) fn accepted(value: &serde_json::Value) -> Response<Full<Bytes>> {
    let mut response = json_response(value);
    *response.status_mut() = StatusCode::ACCEPTED;
    response
}

pub(super) fn json_response(value: &serde_json::Value) -> Response<Full<Bytes>> {
    let mut body = value.to_string();
    body.push('\n');
    with_type(Response::new(Full::new(Bytes::from(body))), "application/json")
}

pub(super) fn text(status: StatusCode, text: String) -> Response<Full<Bytes>> {
    let mut response = with_type(Response::new(Full::new(Bytes::from(text))), "text/plain");
    *response.status_mut() = status;
    response
}

pub(super) fn plain(status: StatusCode, text: &'static str) -> Response<Full<Bytes>> {
    let mut response = with_type(Response::new(Full::new(Bytes::from_static(text.as_bytes()))), "text/plain");
    *response.status_mut() = status;
    response
}

pub(super) fn with_type(mut response: Response<Full<Bytes>>, content_type: &'static str) -> Response<Full<Bytes>> {
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}
