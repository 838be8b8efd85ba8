// userq listen --web: the live queue, and answers sent back.
// The server renders every card (all caller text escaped there); this
// script only inserts them, keeps them current, and posts answers.
"use strict";

(function () {
  const cards = document.getElementById("cards");
  const empty = document.getElementById("empty");
  const status = document.getElementById("status");
  const csrf = document.querySelector('meta[name="userq-csrf"]').content;
  // How long the confirmation of an approval stays disabled once shown, so
  // that a double tap on Send cannot also confirm.
  const CONFIRM_DELAY_MS = 600;

  // The token has been exchanged for a cookie: out of the address bar,
  // and out of the history.
  if (location.search) {
    history.replaceState(null, "", location.pathname + location.hash);
  }

  function say(text) {
    status.textContent = text;
  }

  function questionOf(card) {
    const q = card.querySelector(".question");
    return q ? q.textContent : "The question";
  }

  function started(card) {
    if (!card.dataset.t0) card.dataset.t0 = String(performance.now());
  }

  function refresh() {
    const n = cards.querySelectorAll(".card").length;
    empty.hidden = n > 0;
    document.title = (n ? "(" + n + ") " : "") + "userq";
    tick();
  }

  function fromHtml(html) {
    const template = document.createElement("template");
    template.innerHTML = html;
    return template.content.firstElementChild;
  }

  function add(key, html) {
    if (document.getElementById("q" + key)) return false;
    const card = fromHtml(html);
    started(card);
    cards.appendChild(card);
    return true;
  }

  function remove(key) {
    const card = document.getElementById("q" + key);
    if (!card) return null;
    const question = questionOf(card);
    card.remove();
    return question;
  }

  // --- the live channel ---------------------------------------------------

  const events = new EventSource("/events");
  events.addEventListener("sync", function (event) {
    const data = JSON.parse(event.data);
    const keys = new Set(data.cards.map(function (c) { return c.key; }));
    cards.querySelectorAll(".card").forEach(function (card) {
      if (!keys.has(card.dataset.key)) card.remove();
    });
    data.cards.forEach(function (c) { add(c.key, c.html); });
    refresh();
    say(data.cards.length ? "Connected." : "Connected: nothing to answer yet.");
  });
  events.addEventListener("add", function (event) {
    const data = JSON.parse(event.data);
    if (add(data.key, data.html)) say("New question. " + data.summary);
    refresh();
  });
  events.addEventListener("remove", function (event) {
    const data = JSON.parse(event.data);
    const question = remove(data.key);
    if (question !== null) say("\u201c" + question + "\u201d was " + data.why + ".");
    refresh();
  });
  events.addEventListener("bye", function () {
    events.close();
    cards.querySelectorAll(".card").forEach(function (card) { card.remove(); });
    refresh();
    say("userq listen has stopped: reload this page once it runs again.");
  });
  events.addEventListener("error", function () {
    say(events.readyState === EventSource.CLOSED
      ? "Disconnected: reload to try again."
      : "Reconnecting to userq listen\u2026");
  });

  // --- time left ----------------------------------------------------------

  function left(ms) {
    const s = Math.max(0, Math.ceil(ms / 1000));
    if (s < 60) return s + " s left";
    const m = Math.floor(s / 60);
    if (m < 60) return m + ":" + String(s % 60).padStart(2, "0") + " left";
    return Math.floor(m / 60) + " h " + (m % 60) + " min left";
  }

  function tick() {
    const now = performance.now();
    cards.querySelectorAll(".card").forEach(function (card) {
      const span = card.querySelector(".left");
      if (!span || !span.dataset.leftMs) return;
      started(card);
      const ms = Number(span.dataset.leftMs) - (now - Number(card.dataset.t0));
      span.textContent = "\u00b7 " + left(ms);
    });
  }
  setInterval(tick, 1000);

  // --- answering ----------------------------------------------------------

  function problem(card, text) {
    const p = card.querySelector(".problem");
    p.textContent = text;
    p.hidden = !text;
  }

  function unconfirm(card) {
    const box = card.querySelector(".confirm");
    if (box.hidden) return;
    box.hidden = true;
    card.dataset.confirmations = String(Number(card.dataset.confirmations || 0) + 1);
    card.querySelector(".confirm-yes").disabled = true;
    card.querySelector(".send").disabled = false;
    delete card.dataset.nonce;
  }

  function gather(card) {
    const answers = [];
    const fields = card.querySelectorAll("fieldset.q");
    for (const field of fields) {
      const kind = field.dataset.kind;
      const picked = [];
      field.querySelectorAll("input[type=radio], input[type=checkbox]").forEach(function (box) {
        if (box.checked) picked.push(Number(box.value));
      });
      const typed = field.querySelector(".text input, .text textarea");
      const text = typed ? typed.value : "";
      const nothing = !picked.length && !text.trim();
      if (nothing && (kind !== "multi" || field.dataset.required === "1")) {
        const q = field.querySelector(".question").textContent;
        const how = kind === "text" ? "Type an answer to" : "Choose an answer to";
        const skip = card.querySelector(".skip") ? ", or Skip" : "";
        return "\u26a0 " + how + " \u201c" + q + "\u201d" + skip + ".";
      }
      answers.push({ picked: picked, text: text });
    }
    return answers;
  }

  // One answer in flight per card: a double tap sends once.
  async function send(card, body) {
    if (card.dataset.busy) return;
    card.dataset.busy = "1";
    try {
      await post(card, body);
    } finally {
      delete card.dataset.busy;
    }
  }

  async function post(card, body) {
    problem(card, "");
    let response;
    try {
      response = await fetch("/answer", {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-Userq-Csrf": csrf },
        body: JSON.stringify(Object.assign({ key: card.dataset.key }, body)),
        credentials: "same-origin",
      });
    } catch (error) {
      problem(card, "Not sent: userq listen cannot be reached.");
      return;
    }
    let data = {};
    try { data = await response.json(); } catch (error) { data = {}; }
    const question = questionOf(card);
    if (response.status === 200) {
      remove(card.dataset.key);
      refresh();
      say(data.message + " \u201c" + question + "\u201d");
    } else if (response.status === 409 && data.status === "confirm") {
      confirm(card, data);
    } else if (response.status === 410) {
      remove(card.dataset.key);
      refresh();
      say("\u201c" + question + "\u201d: " + data.message + " Nothing was sent.");
    } else if (response.status === 401) {
      problem(card, "Signed out: open the link userq listen printed, with its token.");
    } else {
      unconfirm(card);
      problem(card, data.message || "Not sent (" + response.status + ").");
    }
  }

  function confirm(card, data) {
    const box = card.querySelector(".confirm");
    const yes = card.querySelector(".confirm-yes");
    card.dataset.nonce = data.nonce;
    // Only this confirmation's own delay enables it, not an earlier one's.
    const generation = String(Number(card.dataset.confirmations || 0) + 1);
    card.dataset.confirmations = generation;
    box.querySelector(".warn").textContent =
      "This approves: \u201c" + data.approve + "\u201d. Confirm to send it.";
    yes.textContent = "Confirm " + data.approve;
    yes.disabled = true;
    card.querySelector(".send").disabled = true;
    box.hidden = false;
    setTimeout(function () {
      if (!box.hidden && card.dataset.confirmations === generation) yes.disabled = false;
    }, CONFIRM_DELAY_MS);
    box.querySelector(".warn").setAttribute("tabindex", "-1");
    box.querySelector(".warn").focus();
  }

  cards.addEventListener("submit", function (event) {
    event.preventDefault();
    const card = event.target.closest(".card");
    const answers = gather(card);
    if (typeof answers === "string") {
      problem(card, answers);
      return;
    }
    send(card, { answers: answers });
  });

  cards.addEventListener("click", function (event) {
    const button = event.target.closest("button");
    if (!button) return;
    const card = button.closest(".card");
    if (button.classList.contains("skip")) {
      send(card, { skip: true });
    } else if (button.classList.contains("confirm-back")) {
      unconfirm(card);
    } else if (button.classList.contains("confirm-yes")) {
      const answers = gather(card);
      if (typeof answers === "string") return;
      send(card, { answers: answers, nonce: card.dataset.nonce || "" });
    }
  });

  // Choosing an option or typing after Send asked for a confirmation asks
  // again; an option and "Other" of a single-select exclude each other.
  cards.addEventListener("input", function (event) {
    const card = event.target.closest(".card");
    if (!card) return;
    unconfirm(card);
    problem(card, "");
    const field = event.target.closest("fieldset.q");
    if (!field || field.dataset.kind !== "single") return;
    if (event.target.type === "radio") {
      const other = field.querySelector(".text input");
      if (other) other.value = "";
    } else if (event.target.type === "text" && event.target.value) {
      field.querySelectorAll("input[type=radio]").forEach(function (r) { r.checked = false; });
    }
  });

  cards.querySelectorAll(".card").forEach(started);
  refresh();
})();
