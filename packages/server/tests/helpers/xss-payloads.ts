/**
 * Stored XSS through saved HTML, with what the materials sanitiser
 * stores for each. The materials tests assert the stored HTML exactly; the article sanitiser's
 * tests run the same payloads (and more) against its own allow-list.
 */
export const MATERIAL_XSS_PAYLOADS: readonly [payload: string, stored: string][] = [
  ['<img src=x onerror=alert(1)>', '<img src="x" />'],
  ['<a href="javascript:alert(1)">x</a>', '<a>x</a>'],
  ['<a href="JaVaScRiPt:alert(1)">x</a>', '<a>x</a>'],
  ['<a href="&#106;avascript:alert(1)">x</a>', '<a>x</a>'],
  ['<a href="java&#x09;script:alert(1)">x</a>', '<a>x</a>'],
  ['<a href=" javascript:alert(1)">x</a>', '<a>x</a>'],
  ['<a href="vbscript:msgbox(1)">x</a>', '<a>x</a>'],
  ['<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">x</a>', '<a>x</a>'],
  ['<svg><script>alert(1)</script></svg>', ''],
  ['<svg onload=alert(1)><circle r="5"/></svg><p>after</p>', '<p>after</p>'],
  ['<iframe srcdoc="<script>alert(1)</script>"></iframe>', ''],
  ['<style>@import url(//evil.test)</style><p>x</p>', '<p>x</p>'],
  ['<p style="background:url(javascript:alert(1))">x</p>', '<p>x</p>'],
  ['<p style="background-image:url(&quot;javascript:alert(1)&quot;)">x</p>', '<p>x</p>'],
  ['<p style="background:url(java\\3a script:alert(1))">x</p>', '<p>x</p>'],
  ['<p style="background:url(data:text/html,evil)">x</p>', '<p>x</p>'],
  ['<p style="width:expression(alert(1));color:red">x</p>', '<p style="color:red">x</p>'],
  ['<p style="behavior:url(x.htc);-moz-binding:url(x.xml#xss)">x</p>', '<p>x</p>'],
  ['<p style="color:red;}</style><script>alert(1)</script>">x</p>', '<p>x</p>'],
  ['<math><mtext><table><mglyph><style><img src onerror=alert(1)>', ''],
  ['<form action=//evil.test><input name=x><button>go</button></form>', 'go'],
  ['<base href=//evil.test><p>x</p>', '<p>x</p>'],
  [
    '<section onmouseover="alert(1)" style="color:#333">x</section>',
    '<section style="color:#333">x</section>',
  ],
  [
    '<p style="position:fixed;top:0;left:0;width:100%;height:100%;z-index:99999">x</p>',
    '<p style="top:0;left:0;width:100%;height:100%">x</p>',
  ],
  ['<p title="t" data-x="y" id="a" class="b" name="n">x</p>', '<p title="t">x</p>'],
  [
    '<a href="https://ok.test/" target="_blank" rel="opener">x</a><a href="/r" target="_top">y</a>',
    '<a href="https://ok.test/" target="_blank" rel="noopener noreferrer">x</a><a href="/r">y</a>',
  ],
  ['<img src="data:image/svg+xml;base64,PHN2Zz4=">', '<img />'],
  [
    '<img src="data:image/png;base64,iVBORw0KGgo=">',
    '<img src="data:image/png;base64,iVBORw0KGgo=" />',
  ],
  [
    '<object data="x.swf"></object><embed src="x.swf"><link rel=stylesheet href=//evil.test/x.css><meta http-equiv=refresh content="0;url=//evil.test">',
    '',
  ],
  ['<noscript><p title="</noscript><img src=x onerror=alert(1)>"></noscript>', ''],
  ['<template><img src=x onerror=alert(1)></template>', ''],
  ['<textarea><img src=x onerror=alert(1)></textarea>', ''],
  ['<xmp><img src=x onerror=alert(1)></xmp>', ''],
  ['<!--<img src=x onerror=alert(1)>--><p>x</p>', '<p>x</p>'],
]
