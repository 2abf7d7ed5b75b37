// ccbench's ns-3 backend: one scenario (the line format written by ccbench/backends/ns3.py) in,
// one JSON report (flows, series, link_series, run, counters, links) out, on stdout.
//
//   ccbench_ns3 CONFIG_FILE
//
// The dumbbell of docs/scenario.md: every flow has its own sender and receiver host, each on
// its own access link (access.delay, access.rate or "no serialisation"), joined by two routers
// over the bottleneck (rate, rtt / 2 each way, the buffer / AQM in both directions). Loss and
// jitter are applied by packet kind (data segments and ping requests, or pure ACKs and ping
// replies) on the bottleneck channel, after the queue, as the simulator does. Every setting
// that departs from an ns-3 default is listed, with its reason, in docs/ns3-backend.md.
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-apps-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/ppp-header.h"
#include "ns3/traffic-control-module.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <deque>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

constexpr uint32_t MSS = 1448;
constexpr uint32_t PPP = 2; // the point-to-point header ns-3 adds to every IP packet
constexpr uint16_t DATA_PORT0 = 10000; // the data sender of flow i binds DATA_PORT0 + i
constexpr uint16_t SINK_PORT0 = 40000; // its receiver listens on SINK_PORT0 + i
constexpr double FAST_SAMPLE_S = 0.01;  // RTT / cwnd statistics, as the kernel backend samples

// ---------------------------------------------------------------------------------- config

struct FlowCfg
{
    int id = 0;
    int group = 0;
    std::string cc;
    int64_t start_ns = 0;
    uint64_t rwnd = 0;
    int64_t size = -1; // -1: bulk
    bool pacing = false;
    bool ts = true;
    bool ecn = false;
    bool reverse = false;
};

struct Cfg
{
    int64_t duration_ns = 0;
    uint64_t seed = 1;
    int64_t sample_ns = 0;
    uint64_t rate_bps = 0;
    int64_t rtt_ns = 0;
    int64_t jitter_ns = 0;
    std::string jitter_dist = "uniform";
    bool reorder = true;
    std::string loss = "none";
    double p = 0, r = 0, h = 0, k = 1;
    std::string impair = "data";
    std::string buffer_kind = "bytes";
    uint64_t buffer = 0;
    std::string aqm = "droptail";
    std::map<std::string, std::string> aqm_params;
    uint64_t access_rate_bps = 0; // 0: no serialisation
    int64_t access_delay_ns = 0;
    int64_t ping_ns = 0;
    std::vector<FlowCfg> flows;
};

Cfg
ReadConfig(const std::string& path)
{
    std::ifstream in(path);
    if (!in)
    {
        std::cerr << "cannot read " << path << "\n";
        std::exit(2);
    }
    Cfg c;
    std::string line;
    while (std::getline(in, line))
    {
        std::istringstream s(line);
        std::string key;
        if (!(s >> key) || key[0] == '#')
        {
            continue;
        }
        if (key == "duration_ns") s >> c.duration_ns;
        else if (key == "seed") s >> c.seed;
        else if (key == "sample_ns") s >> c.sample_ns;
        else if (key == "rate_bps") s >> c.rate_bps;
        else if (key == "rtt_ns") s >> c.rtt_ns;
        else if (key == "jitter") s >> c.jitter_ns >> c.jitter_dist >> c.reorder;
        else if (key == "loss") s >> c.loss >> c.p >> c.r >> c.h >> c.k;
        else if (key == "impair") s >> c.impair;
        else if (key == "buffer") s >> c.buffer_kind >> c.buffer;
        else if (key == "aqm") s >> c.aqm;
        else if (key == "aqm_param")
        {
            std::string k, v;
            s >> k >> v;
            c.aqm_params[k] = v;
        }
        else if (key == "access") s >> c.access_rate_bps >> c.access_delay_ns;
        else if (key == "ping_ns") s >> c.ping_ns;
        else if (key == "flow")
        {
            FlowCfg f;
            s >> f.id >> f.group >> f.cc >> f.start_ns >> f.rwnd >> f.size >> f.pacing >> f.ts >> f.ecn >>
                f.reverse;
            c.flows.push_back(f);
        }
        else
        {
            std::cerr << "unknown config key " << key << "\n";
            std::exit(2);
        }
    }
    return c;
}

const std::map<std::string, std::string> CC_TYPES = {
    {"reno", "ns3::TcpLinuxReno"},      {"cubic", "ns3::TcpCubic"},   {"bbr", "ns3::TcpBbr"},
    {"vegas", "ns3::TcpVegas"},         {"westwood", "ns3::TcpWestwoodPlus"},
    {"highspeed", "ns3::TcpHighSpeed"}, {"hybla", "ns3::TcpHybla"},   {"illinois", "ns3::TcpIllinois"},
    {"scalable", "ns3::TcpScalable"},   {"yeah", "ns3::TcpYeah"},     {"htcp", "ns3::TcpHtcp"},
    {"bic", "ns3::TcpBic"},             {"veno", "ns3::TcpVeno"},     {"ledbat", "ns3::TcpLedbat"},
    {"lp", "ns3::TcpLp"},               {"dctcp", "ns3::TcpDctcp"},
};

// ------------------------------------------------------------------------- packet classes

/// What a packet on the wire is: the flow it belongs to (-1: none, e.g. ping), whether it is
/// "data" in the scenario's impair sense (a TCP segment with payload, a ping request) and its
/// IP size. `ppp`: the packet still carries the point-to-point header; `ip`: it starts with
/// the IPv4 header (false: it starts at the TCP header, as a queue-disc item's packet).
struct Kind
{
    int flow = -1;
    bool data = false;
    bool tcp = false;
};

Kind
Classify(Ptr<const Packet> pkt, bool ppp, bool ip, uint8_t proto = 6)
{
    Kind k;
    Ptr<Packet> p = pkt->Copy();
    if (ppp)
    {
        PppHeader h;
        p->RemoveHeader(h);
    }
    if (ip)
    {
        Ipv4Header ih;
        p->RemoveHeader(ih);
        proto = ih.GetProtocol();
    }
    if (proto == 6)
    {
        TcpHeader th;
        p->RemoveHeader(th);
        k.tcp = true;
        k.data = p->GetSize() > 0;
        uint16_t sp = th.GetSourcePort(), dp = th.GetDestinationPort();
        if (sp >= DATA_PORT0 && sp < SINK_PORT0)
            k.flow = sp - DATA_PORT0;
        else if (dp >= DATA_PORT0 && dp < SINK_PORT0)
            k.flow = dp - DATA_PORT0;
    }
    else if (proto == 1)
    {
        Icmpv4Header ich;
        p->RemoveHeader(ich);
        k.data = ich.GetType() == Icmpv4Header::ICMPV4_ECHO;
    }
    return k;
}

// ---------------------------------------------------------------------- the bottleneck channel

struct DirStats
{
    uint64_t arrived = 0, departed = 0, dropped_queue = 0, dropped_loss = 0, ce_marked = 0;
    uint64_t departed_ip_bytes = 0;
};

/// A point-to-point channel that applies the scenario's random loss and delay jitter to the
/// packets of the impaired kind, after the queue (the simulator's order: queue, then
/// propagation with impairments). Loss: Bernoulli or Gilbert–Elliott with per-direction state.
class ImpairedChannel : public PointToPointChannel
{
  public:
    const Cfg* cfg = nullptr;
    bool impairData = false, impairAck = false;
    Ptr<UniformRandomVariable> uni;
    Ptr<NormalRandomVariable> norm;
    bool geBad[2] = {false, false};
    Time lastArrival[2];
    DirStats* stats[2] = {nullptr, nullptr}; // by source device index
    std::vector<int64_t>* flowDrops = nullptr;

    bool TransmitStart(Ptr<const Packet> p, Ptr<PointToPointNetDevice> src, Time txTime) override
    {
        int dir = src == GetPointToPointDevice(0) ? 0 : 1;
        Ptr<PointToPointNetDevice> dst = GetPointToPointDevice(1 - dir);
        if (stats[dir])
        {
            stats[dir]->departed++;
            stats[dir]->departed_ip_bytes += p->GetSize() - PPP;
        }
        Time delay = GetDelay();
        if (cfg && (cfg->loss != "none" || cfg->jitter_ns > 0))
        {
            Kind k = Classify(p, true, true);
            bool hit = k.data ? impairData : impairAck;
            if (hit && Lost(dir))
            {
                if (stats[dir])
                    stats[dir]->dropped_loss++;
                if (flowDrops && k.flow >= 0 && k.data)
                    (*flowDrops)[k.flow]++;
                return true; // the sender's device sees a normal transmission
            }
            if (hit && cfg->jitter_ns > 0)
                delay = Jittered(delay);
        }
        Time arrival = Simulator::Now() + txTime + delay;
        if (cfg && cfg->jitter_ns > 0 && !cfg->reorder && arrival < lastArrival[dir])
            arrival = lastArrival[dir]; // no overtaking: leave with the packet ahead
        lastArrival[dir] = std::max(lastArrival[dir], arrival);
        Simulator::ScheduleWithContext(dst->GetNode()->GetId(),
                                       arrival - Simulator::Now(),
                                       &PointToPointNetDevice::Receive,
                                       dst,
                                       p->Copy());
        return true;
    }

  private:
    bool Lost(int dir)
    {
        if (cfg->loss == "bernoulli")
            return uni->GetValue() < cfg->p;
        if (cfg->loss == "gilbert")
        {
            // state transition first, then delivery in the new state (netem's gemodel order)
            if (geBad[dir])
            {
                if (uni->GetValue() < cfg->r)
                    geBad[dir] = false;
            }
            else if (uni->GetValue() < cfg->p)
                geBad[dir] = true;
            double deliver = geBad[dir] ? cfg->h : cfg->k;
            return uni->GetValue() >= deliver;
        }
        return false;
    }

    Time Jittered(Time base)
    {
        double j = cfg->jitter_ns, dev = 0;
        if (cfg->jitter_dist == "uniform")
            dev = (uni->GetValue() * 2 - 1) * j;
        else if (cfg->jitter_dist == "normal")
            dev = norm->GetValue() * j;
        else
        { // pareto, shape 3, sd = jitter, mean 0 (crates/sim/src/link/jitter.rs)
            double a = 3.0, xm = j / std::sqrt(a / ((a - 1) * (a - 1) * (a - 2)));
            double u = 1.0 - uni->GetValue();
            dev = xm / std::pow(u, 1.0 / a) - a * xm / (a - 1);
        }
        double d = base.GetNanoSeconds() + dev;
        return NanoSeconds(d <= 0 ? 0 : (int64_t)std::llround(d));
    }
};

// --------------------------------------------------------------------------------- flows

struct FlowState
{
    FlowCfg cfg;
    int sendSide = 0; // 0: the sender-side hosts (left), 1: the receiver-side hosts (right)
    Ptr<Node> snode, rnode;
    Ipv4Address raddr;
    Ptr<TcpSocketBase> snd, rcv;
    Ptr<Socket> listener;
    bool connected = false, started = false;
    int64_t queued = 0;
    // sender state (traces)
    uint32_t cwnd = 0, inflight = 0;
    int ca = 0;
    Time srtt, minRtt = Time::Max();
    double pacingBps = -1;
    SequenceNumber32 sndMax{0}, highAck{0};
    bool sndMaxSet = false;
    int64_t dataSent = 0, retrans = 0, lossEvents = 0;
    // receiver state
    uint64_t rxBytes = 0;
    int64_t dataReceived = 0;
    bool completed = false;
    double doneAt = -1;
    // statistics
    std::vector<double> rttSamples, cwndSamples;
    uint64_t prevBytes = 0;
    double prevT = 0;
};

struct SideCounters
{
    int64_t out = 0, in = 0, retrans = 0, timeouts = 0, recoveries = 0;
};

std::vector<FlowState> g_flows;
SideCounters g_side[2];
Cfg g_cfg;

void
OnCwnd(int i, uint32_t, uint32_t v)
{
    g_flows[i].cwnd = v;
}

void
OnInflight(int i, uint32_t, uint32_t v)
{
    g_flows[i].inflight = v;
}

void
OnSrtt(int i, Time, Time v)
{
    g_flows[i].srtt = v;
}

void
OnLastRtt(int i, Time, Time v)
{
    if (v.IsStrictlyPositive() && v < g_flows[i].minRtt)
        g_flows[i].minRtt = v;
}

void
OnPacing(int i, DataRate, DataRate v)
{
    g_flows[i].pacingBps = (double)v.GetBitRate();
}

void
OnHighAck(int i, SequenceNumber32, SequenceNumber32 v)
{
    g_flows[i].highAck = v;
}

void
OnCongState(int i, TcpSocketState::TcpCongState_t old, TcpSocketState::TcpCongState_t now)
{
    FlowState& f = g_flows[i];
    if (now >= TcpSocketState::CA_RECOVERY && old < TcpSocketState::CA_RECOVERY)
        f.lossEvents++;
    if (now == TcpSocketState::CA_LOSS && old != TcpSocketState::CA_LOSS)
        g_side[f.sendSide].timeouts++;
    if (now == TcpSocketState::CA_RECOVERY && old != TcpSocketState::CA_RECOVERY)
        g_side[f.sendSide].recoveries++;
    f.ca = now;
}

void
OnSenderTx(int i, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
{
    FlowState& f = g_flows[i];
    g_side[f.sendSide].out++;
    uint32_t len = p->GetSize();
    if (len == 0)
        return;
    f.dataSent++;
    SequenceNumber32 end = h.GetSequenceNumber() + len;
    if (f.sndMaxSet && h.GetSequenceNumber() < f.sndMax)
    {
        f.retrans++;
        g_side[f.sendSide].retrans++;
    }
    if (!f.sndMaxSet || end > f.sndMax)
    {
        f.sndMax = end;
        f.sndMaxSet = true;
    }
}

void
OnSenderRx(int i, Ptr<const Packet>, const TcpHeader&, Ptr<const TcpSocketBase>)
{
    g_side[g_flows[i].sendSide].in++;
}

void
OnReceiverTx(int i, Ptr<const Packet>, const TcpHeader&, Ptr<const TcpSocketBase>)
{
    g_side[1 - g_flows[i].sendSide].out++;
}

void
OnReceiverRx(int i, Ptr<const Packet> p, const TcpHeader&, Ptr<const TcpSocketBase>)
{
    g_side[1 - g_flows[i].sendSide].in++;
    if (p->GetSize() > 0)
        g_flows[i].dataReceived++;
}

void
Fill(int i)
{
    FlowState& f = g_flows[i];
    if (!f.connected)
        return;
    while (true)
    {
        uint32_t avail = f.snd->GetTxAvailable();
        if (avail == 0)
            break;
        int64_t n = std::min<int64_t>(avail, 1 << 16);
        if (f.cfg.size >= 0)
        {
            n = std::min<int64_t>(n, f.cfg.size - f.queued);
            if (n <= 0)
                break;
        }
        int sent = f.snd->Send(Create<Packet>((uint32_t)n), 0);
        if (sent <= 0)
            break;
        f.queued += sent;
    }
    if (f.cfg.size >= 0 && f.queued >= f.cfg.size)
        f.snd->Close(); // FIN after the last byte, as iperf3 -n closes
}

void
OnConnected(int i, Ptr<Socket>)
{
    g_flows[i].connected = true;
    Fill(i);
}

void
OnConnectFailed(int i, Ptr<Socket>)
{
    std::cerr << "flow " << i << ": connection failed\n";
}

void
OnSendSpace(int i, Ptr<Socket>, uint32_t)
{
    Fill(i);
}

void
OnRecv(int i, Ptr<Socket> s)
{
    FlowState& f = g_flows[i];
    Ptr<Packet> p;
    while ((p = s->Recv()))
    {
        f.rxBytes += p->GetSize();
    }
    if (f.cfg.size >= 0 && !f.completed && (int64_t)f.rxBytes >= f.cfg.size)
    {
        f.completed = true;
        f.doneAt = Simulator::Now().GetSeconds();
    }
}

bool
OnConnRequest(Ptr<Socket>, const Address&)
{
    return true;
}

void
OnAccept(int i, Ptr<Socket> s, const Address&)
{
    FlowState& f = g_flows[i];
    f.rcv = DynamicCast<TcpSocketBase>(s);
    s->SetRecvCallback(MakeBoundCallback(&OnRecv, i));
    s->TraceConnectWithoutContext("Tx", MakeBoundCallback(&OnReceiverTx, i));
    s->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnReceiverRx, i));
}

void
StartFlow(int i)
{
    FlowState& f = g_flows[i];
    f.started = true;
    f.prevT = Simulator::Now().GetSeconds();
    f.snd->Bind(InetSocketAddress(Ipv4Address::GetAny(), DATA_PORT0 + i));
    f.snd->Connect(InetSocketAddress(f.raddr, SINK_PORT0 + i));
}

// --------------------------------------------------------------------------- sampling

struct Series
{
    std::vector<int> flow;
    std::vector<double> t, goodput, rtt, pacing, minRtt;
    std::vector<int64_t> cwnd, inflight, retrans;
    std::vector<std::string> state;
};

struct LinkSeries
{
    std::vector<double> t, probe, sojourn, p50, p95;
    std::vector<int64_t> queue;
};

Series g_series;
LinkSeries g_link;
std::vector<double> g_sojourn;             // every forward bottleneck packet, ms
double g_sojournSum = 0;                   // in the current interval
int64_t g_sojournN = 0;
std::deque<Time> g_enqTimes;               // drop-tail device queue: enqueue instants (FIFO)
std::vector<double> g_pingRtts;            // ms
std::vector<std::pair<double, double>> g_pings; // (time received, rtt ms)
size_t g_pingCursor = 0;

Ptr<Queue<Packet>> g_fwdQueue;             // drop-tail: the forward bottleneck device queue
Ptr<QueueDisc> g_fwdDisc;                  // AQM: the forward bottleneck queue disc
Ptr<QueueDisc> g_disc[2];                  // AQM: both directions

const char* CA_NAMES[] = {"open", "disorder", "cwr", "recovery", "loss"};

int64_t
QueueBytes()
{
    if (g_fwdDisc)
        return g_fwdDisc->GetNBytes();
    if (g_fwdQueue)
        return (int64_t)g_fwdQueue->GetNBytes() - (int64_t)PPP * g_fwdQueue->GetNPackets();
    return 0;
}

void
RecordSojourn(Time s)
{
    double ms = s.GetSeconds() * 1e3;
    g_sojourn.push_back(ms);
    g_sojournSum += ms;
    g_sojournN++;
}

void
OnDevEnqueue(Ptr<const Packet>)
{
    g_enqTimes.push_back(Simulator::Now());
}

void
OnDevDequeue(Ptr<const Packet>)
{
    if (!g_enqTimes.empty())
    {
        RecordSojourn(Simulator::Now() - g_enqTimes.front());
        g_enqTimes.pop_front();
    }
}

double
Pct(std::vector<double> v, double q)
{
    if (v.empty())
        return NAN;
    std::sort(v.begin(), v.end());
    double k = (v.size() - 1) * q / 100.0;
    size_t lo = (size_t)std::floor(k), hi = (size_t)std::ceil(k);
    return v[lo] + (v[hi] - v[lo]) * (k - lo);
}

void
FastSample()
{
    double now = Simulator::Now().GetSeconds();
    for (auto& f : g_flows)
    {
        if (!f.connected || (f.completed && f.doneAt < now))
            continue;
        if (f.srtt.IsStrictlyPositive())
            f.rttSamples.push_back(f.srtt.GetSeconds() * 1e3);
        f.cwndSamples.push_back((double)f.cwnd / MSS);
    }
    Simulator::Schedule(Seconds(FAST_SAMPLE_S), &FastSample);
}

void
Sample()
{
    double now = Simulator::Now().GetSeconds();
    for (size_t i = 0; i < g_flows.size(); i++)
    {
        FlowState& f = g_flows[i];
        if (!f.started || (f.completed && f.doneAt < now - g_cfg.sample_ns / 1e9))
            continue;
        g_series.flow.push_back((int)i);
        g_series.t.push_back(now);
        double gp = NAN;
        if (now > f.prevT)
        {
            gp = (f.rxBytes - f.prevBytes) * 8.0 / (now - f.prevT);
            f.prevBytes = f.rxBytes;
            f.prevT = now;
        }
        g_series.goodput.push_back(gp);
        bool up = f.connected;
        g_series.cwnd.push_back(up ? (int64_t)(f.cwnd / MSS) : -1);
        g_series.rtt.push_back(up && f.srtt.IsStrictlyPositive() ? f.srtt.GetSeconds() * 1e3 : NAN);
        g_series.pacing.push_back(f.pacingBps > 0 ? f.pacingBps : NAN);
        g_series.inflight.push_back(up ? (int64_t)(f.inflight / MSS) : -1);
        g_series.state.push_back(up ? CA_NAMES[std::min(f.ca, 4)] : "");
        g_series.minRtt.push_back(f.minRtt != Time::Max() ? f.minRtt.GetSeconds() * 1e3 : NAN);
        g_series.retrans.push_back(f.retrans);
    }
    g_link.t.push_back(now);
    g_link.queue.push_back(QueueBytes());
    g_link.sojourn.push_back(g_sojournN ? g_sojournSum / g_sojournN : NAN);
    g_sojournSum = 0;
    g_sojournN = 0;
    std::vector<double> inside;
    while (g_pingCursor < g_pings.size() && g_pings[g_pingCursor].first <= now + 1e-12)
        inside.push_back(g_pings[g_pingCursor++].second);
    g_link.probe.push_back(inside.empty() ? NAN : inside.back());
    g_link.p50.push_back(Pct(inside, 50));
    g_link.p95.push_back(Pct(inside, 95));
}

void
OnPingRtt(uint16_t, Time rtt)
{
    double ms = rtt.GetSeconds() * 1e3;
    g_pingRtts.push_back(ms);
    g_pings.emplace_back(Simulator::Now().GetSeconds(), ms);
}

// --------------------------------------------------------------------------- topology

DirStats g_dir[2];                 // the bottleneck: 0 forward (left → right), 1 reverse
std::vector<int64_t> g_flowDrops;  // per flow: data packets dropped (queue + loss)

void
OnQueueDrop(int dir, Ptr<const Packet> p)
{
    g_dir[dir].dropped_queue++;
    Kind k = Classify(p, true, true);
    if (k.flow >= 0 && k.data)
        g_flowDrops[k.flow]++;
}

void
OnDiscDrop(int dir, Ptr<const QueueDiscItem> item)
{
    g_dir[dir].dropped_queue++;
    auto ipItem = DynamicCast<const Ipv4QueueDiscItem>(item);
    uint8_t proto = ipItem ? ipItem->GetHeader().GetProtocol() : 6;
    Kind k = Classify(item->GetPacket(), false, false, proto);
    if (k.flow >= 0 && k.data)
        g_flowDrops[k.flow]++;
}

void
OnDiscMark(int dir, Ptr<const QueueDiscItem>, const char*)
{
    g_dir[dir].ce_marked++;
}

void
OnArrive(int dir, Ptr<const Packet>)
{
    g_dir[dir].arrived++;
}

void
OnDiscArrive(int dir, Ptr<const QueueDiscItem>)
{
    g_dir[dir].arrived++;
}

void
OnDiscSojourn(Time s)
{
    RecordSojourn(s);
}

/// Two devices joined by `ch`, each with a drop-tail device queue of `maxSize`.
std::pair<Ptr<PointToPointNetDevice>, Ptr<PointToPointNetDevice>>
Connect(Ptr<Node> a, Ptr<Node> b, Ptr<PointToPointChannel> ch, uint64_t bps, Time delay, QueueSize maxA,
        QueueSize maxB, bool flowControl)
{
    ch->SetAttribute("Delay", TimeValue(delay));
    Ptr<PointToPointNetDevice> devs[2];
    Ptr<Node> nodes[2] = {a, b};
    QueueSize sizes[2] = {maxA, maxB};
    for (int i = 0; i < 2; i++)
    {
        Ptr<PointToPointNetDevice> d = CreateObject<PointToPointNetDevice>();
        d->SetAddress(Mac48Address::Allocate());
        d->SetDataRate(DataRate(bps));
        Ptr<Queue<Packet>> q = CreateObject<DropTailQueue<Packet>>();
        q->SetMaxSize(sizes[i]);
        d->SetQueue(q);
        nodes[i]->AddDevice(d);
        d->Attach(ch);
        if (flowControl)
        {
            Ptr<NetDeviceQueueInterface> ndqi = CreateObject<NetDeviceQueueInterface>();
            ndqi->GetTxQueue(0)->ConnectQueueTraces(q);
            d->AggregateObject(ndqi);
        }
        devs[i] = d;
    }
    return {devs[0], devs[1]};
}

/// Remove the root queue disc Ipv4AddressHelper::Assign installs (FqCoDel) on devices with
/// flow control: the queue is the scenario's, nothing hidden in front of it.
void
RemoveQdiscs(const NetDeviceContainer& devs)
{
    for (uint32_t i = 0; i < devs.GetN(); i++)
    {
        Ptr<NetDevice> d = devs.Get(i);
        Ptr<TrafficControlLayer> tc = d->GetNode()->GetObject<TrafficControlLayer>();
        if (tc && tc->GetRootQueueDiscOnDevice(d))
            tc->DeleteRootQueueDiscOnDevice(d);
    }
}

/// The wire rate that carries IP packets of 1500 bytes at `ipBps` (the PPP header's 2 bytes
/// on top): the scenario's rates are IP-level rates, as in the simulator and ccbench-link.
uint64_t
WireRate(uint64_t ipBps)
{
    return (uint64_t)std::llround(ipBps * (1500.0 + PPP) / 1500.0);
}

std::string
Param(const std::string& k, const std::string& dflt = "")
{
    auto it = g_cfg.aqm_params.find(k);
    return it == g_cfg.aqm_params.end() ? dflt : it->second;
}

TrafficControlHelper
AqmHelper()
{
    TrafficControlHelper t;
    const std::string& a = g_cfg.aqm;
    auto ns = [](const std::string& v) { return TimeValue(NanoSeconds(std::stoll(v))); };
    auto pkts = [](const std::string& v) { return QueueSizeValue(QueueSize(v + "p")); };
    auto flag = [](const std::string& v) { return BooleanValue(v == "1"); };
    if (a == "codel")
    {
        t.SetRootQueueDisc("ns3::CoDelQueueDisc",
                           "Target", ns(Param("target_ns")),
                           "Interval", ns(Param("interval_ns")),
                           "MaxSize", pkts(Param("limit_packets")),
                           "UseEcn", flag(Param("ecn")),
                           "MinBytes", UintegerValue(1514));
    }
    else if (a == "fq_codel")
    {
        // FqCoDelQueueDisc takes its times as strings
        t.SetRootQueueDisc("ns3::FqCoDelQueueDisc",
                           "Target", StringValue(Param("target_ns") + "ns"),
                           "Interval", StringValue(Param("interval_ns") + "ns"),
                           "MaxSize", pkts(Param("limit_packets")),
                           "UseEcn", flag(Param("ecn")),
                           "Flows", UintegerValue(std::stoul(Param("flows"))),
                           "DropBatchSize", UintegerValue(std::stoul(Param("drop_batch"))));
    }
    else if (a == "pie")
    {
        t.SetRootQueueDisc("ns3::PieQueueDisc",
                           "QueueDelayReference", ns(Param("target_ns")),
                           "Tupdate", ns(Param("tupdate_ns")),
                           "MaxSize", pkts(Param("limit_packets")),
                           "UseEcn", flag(Param("ecn")),
                           "A", DoubleValue(std::stod(Param("alpha")) / 16.0),
                           "B", DoubleValue(std::stod(Param("beta")) / 16.0),
                           "MeanPktSize", UintegerValue(1500));
    }
    else if (a == "red")
    {
        double avpkt = std::stod(Param("avpkt"));
        double burst = std::stod(Param("burst"));
        // tc red: the EWMA weight W = 2^-Wlog, Wlog the first for which burst packets arriving
        // at an empty queue just reach min (tc_red_eval_ewma); ns-3 takes the weight itself.
        double a = burst + 1 - std::stod(Param("min_bytes")) / avpkt;
        double w = 0.5;
        for (int wlog = 1; wlog < 32; wlog++, w /= 2)
        {
            if (a <= (1 - std::pow(1 - w, burst)) / w)
                break;
        }
        t.SetRootQueueDisc("ns3::RedQueueDisc",
                           "MaxSize", QueueSizeValue(QueueSize(Param("limit_bytes") + "B")),
                           "MinTh", DoubleValue(std::stod(Param("min_bytes"))),
                           "MaxTh", DoubleValue(std::stod(Param("max_bytes"))),
                           "LInterm", DoubleValue(1.0 / std::stod(Param("probability"))),
                           "MeanPktSize", UintegerValue((uint32_t)avpkt),
                           "QW", DoubleValue(w),
                           "Gentle", flag(Param("gentle")),
                           "UseEcn", flag(Param("ecn")),
                           "UseHardDrop", flag(Param("harddrop")),
                           "Wait", BooleanValue(false));
    }
    return t;
}

// ------------------------------------------------------------------------------ output

struct Json
{
    std::ostringstream o;
    bool first = true;

    static std::string Num(double v)
    {
        if (!std::isfinite(v))
            return "null";
        char b[40];
        std::snprintf(b, sizeof b, "%.17g", v);
        return b;
    }
};

template <class T>
std::string
Arr(const std::vector<T>& v, bool negNull = false)
{
    std::ostringstream o;
    o << "[";
    for (size_t i = 0; i < v.size(); i++)
    {
        if (i)
            o << ",";
        if constexpr (std::is_floating_point_v<T>)
            o << Json::Num(v[i]);
        else if constexpr (std::is_same_v<T, std::string>)
            o << (v[i].empty() ? "null" : "\"" + v[i] + "\"");
        else
        {
            if (negNull && v[i] < 0)
                o << "null";
            else
                o << v[i];
        }
    }
    o << "]";
    return o.str();
}

} // namespace

int
main(int argc, char** argv)
{
    if (argc != 2)
    {
        std::cerr << "usage: ccbench_ns3 CONFIG\n";
        return 2;
    }
    auto wall0 = std::chrono::steady_clock::now();
    g_cfg = ReadConfig(argv[1]);
    const Cfg& c = g_cfg;
    const size_t n = c.flows.size();

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(c.seed);

    // ---- TCP as Linux runs it (docs/ns3-backend.md) ----
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(MSS));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(40)));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
    Config::SetDefault("ns3::TcpSocket::TcpNoDelay", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(200)));
    // ns-3: RTO = max(srtt + max(G, 4 rttvar), MinRto); Linux: srtt + max(4 mdev, rto_min).
    // G = rto_min gives Linux's form (with G = 1 ms the RTO sits at srtt once the RTT settles,
    // and a retransmission queued behind a full buffer times out spuriously).
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(MilliSeconds(200)));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(true));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType", TypeIdValue(TypeId::LookupByName("ns3::TcpPrrRecovery")));
    Config::SetDefault("ns3::TcpSocketState::PaceInitialWindow", BooleanValue(true));

    // ---- nodes: one sender and one receiver host per flow, two routers, ping hosts ----
    Ptr<Node> r1 = CreateObject<Node>(), r2 = CreateObject<Node>();
    NodeContainer all(r1, r2);
    std::vector<Ptr<Node>> left(n), right(n);
    for (size_t i = 0; i < n; i++)
    {
        left[i] = CreateObject<Node>();
        right[i] = CreateObject<Node>();
        all.Add(left[i]);
        all.Add(right[i]);
    }
    Ptr<Node> pingL, pingR;
    if (c.ping_ns > 0)
    {
        pingL = CreateObject<Node>();
        pingR = CreateObject<Node>();
        all.Add(pingL);
        all.Add(pingR);
    }
    InternetStackHelper stack;
    stack.Install(all);

    Ipv4AddressHelper addr;
    addr.SetBase("10.0.0.0", "255.255.255.252");

    // ---- the bottleneck ----
    bool aqm = c.aqm != "droptail";
    QueueSize bq = aqm ? QueueSize("1p")
                       : (c.buffer_kind == "packets"
                              ? QueueSize(QueueSizeUnit::PACKETS, (uint32_t)c.buffer)
                              // bytes: the limit on IP bytes; ns-3 counts the PPP header of each
                              // packet too, 2 bytes per full-size packet the buffer holds
                              : QueueSize(QueueSizeUnit::BYTES,
                                          (uint32_t)(c.buffer + PPP * ((c.buffer + 1499) / 1500))));
    Ptr<ImpairedChannel> bch = CreateObject<ImpairedChannel>();
    bch->cfg = &g_cfg;
    bch->impairData = c.impair == "data" || c.impair == "both";
    bch->impairAck = c.impair == "ack" || c.impair == "both";
    bch->uni = CreateObject<UniformRandomVariable>();
    bch->uni->SetStream(1);
    bch->norm = CreateObject<NormalRandomVariable>();
    bch->norm->SetStream(2);
    bch->stats[0] = &g_dir[0];
    bch->stats[1] = &g_dir[1];
    g_flowDrops.assign(n, 0);
    bch->flowDrops = &g_flowDrops;
    auto [b1, b2] = Connect(r1, r2, bch, WireRate(c.rate_bps), NanoSeconds(c.rtt_ns / 2), bq, bq, aqm);
    NetDeviceContainer bdevs;
    bdevs.Add(b1);
    bdevs.Add(b2);
    addr.Assign(bdevs);
    addr.NewNetwork();
    RemoveQdiscs(bdevs); // no hidden FqCoDel: the queue is the scenario's
    if (aqm)
    {
        QueueDiscContainer qd = AqmHelper().Install(bdevs);
        if (c.aqm == "fq_codel" && !Param("quantum").empty())
            for (uint32_t j = 0; j < qd.GetN(); j++)
                DynamicCast<FqCoDelQueueDisc>(qd.Get(j))->SetQuantum(std::stoul(Param("quantum")));
        g_fwdDisc = qd.Get(0);
        for (int dir = 0; dir < 2; dir++)
        {
            Ptr<QueueDisc> d = qd.Get(dir);
            g_disc[dir] = d;
            d->TraceConnectWithoutContext("Enqueue", MakeBoundCallback(&OnDiscArrive, dir));
            d->TraceConnectWithoutContext("Drop", MakeBoundCallback(&OnDiscArrive, dir));
            d->TraceConnectWithoutContext("Drop", MakeBoundCallback(&OnDiscDrop, dir));
            d->TraceConnectWithoutContext("Mark", MakeBoundCallback(&OnDiscMark, dir));
        }
        g_fwdDisc->TraceConnectWithoutContext("SojournTime", MakeCallback(&OnDiscSojourn));
    }
    else
    {
        Ptr<PointToPointNetDevice> bd[2] = {b1, b2};
        for (int dir = 0; dir < 2; dir++)
        {
            Ptr<Queue<Packet>> q = bd[dir]->GetQueue();
            q->TraceConnectWithoutContext("Enqueue", MakeBoundCallback(&OnArrive, dir));
            q->TraceConnectWithoutContext("Drop", MakeBoundCallback(&OnArrive, dir));
            q->TraceConnectWithoutContext("Drop", MakeBoundCallback(&OnQueueDrop, dir));
        }
        g_fwdQueue = b1->GetQueue();
        g_fwdQueue->TraceConnectWithoutContext("Enqueue", MakeCallback(&OnDevEnqueue));
        g_fwdQueue->TraceConnectWithoutContext("Dequeue", MakeCallback(&OnDevDequeue));
    }

    // ---- access links: every host its own; "no rate" = no serialisation to speak of ----
    uint64_t accessBps = c.access_rate_bps ? WireRate(c.access_rate_bps)
                                           : std::max<uint64_t>(100'000'000'000ULL, c.rate_bps * 100);
    QueueSize big(QueueSizeUnit::PACKETS, 1'000'000);
    auto access = [&](Ptr<Node> host, Ptr<Node> router) {
        Ptr<PointToPointChannel> ch = CreateObject<PointToPointChannel>();
        auto [d1, d2] = Connect(host, router, ch, accessBps, NanoSeconds(c.access_delay_ns), big, big, false);
        NetDeviceContainer devs;
        devs.Add(d1);
        devs.Add(d2);
        Ipv4InterfaceContainer ifs = addr.Assign(devs);
        addr.NewNetwork();
        RemoveQdiscs(devs);
        return ifs.GetAddress(0);
    };
    std::vector<Ipv4Address> leftAddr(n), rightAddr(n);
    for (size_t i = 0; i < n; i++)
    {
        leftAddr[i] = access(left[i], r1);
        rightAddr[i] = access(right[i], r2);
    }
    Ipv4Address pingDst;
    if (c.ping_ns > 0)
    {
        access(pingL, r1);
        pingDst = access(pingR, r2);
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    // ---- flows ----
    g_flows.resize(n);
    for (size_t i = 0; i < n; i++)
    {
        FlowState& f = g_flows[i];
        f.cfg = c.flows[i];
        f.sendSide = f.cfg.reverse ? 1 : 0;
        f.snode = f.cfg.reverse ? right[i] : left[i];
        f.rnode = f.cfg.reverse ? left[i] : right[i];
        f.raddr = f.cfg.reverse ? leftAddr[i] : rightAddr[i];
        TypeId cc = TypeId::LookupByName(CC_TYPES.at(f.cfg.cc));
        // per connection: the algorithm (both ends: DCTCP's receiver echoes CE its own way),
        // pacing (BBR always paces, as Linux's BBR does), buffers from rwnd, timestamps, ECN
        for (Ptr<Node> node : {f.snode, f.rnode})
            node->GetObject<TcpL4Protocol>()->SetAttribute("SocketType", TypeIdValue(cc));
        bool pace = f.cfg.pacing || f.cfg.cc == "bbr";
        Config::SetDefault("ns3::TcpSocketState::EnablePacing", BooleanValue(pace));
        Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue((uint32_t)std::min<uint64_t>(f.cfg.rwnd, UINT32_MAX)));
        // Linux's send buffer autotunes up to tcp_wmem max (4 MiB); here it is fixed, at
        // least twice the window so the sender is never limited by it before the window is
        Config::SetDefault("ns3::TcpSocket::SndBufSize",
                           UintegerValue((uint32_t)std::min<uint64_t>(std::max<uint64_t>(2 * f.cfg.rwnd, 4 << 20), UINT32_MAX)));
        Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(f.cfg.ts));
        Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue(f.cfg.ecn ? "On" : "Off"));

        f.listener = Socket::CreateSocket(f.rnode, TcpSocketFactory::GetTypeId());
        f.listener->Bind(InetSocketAddress(Ipv4Address::GetAny(), SINK_PORT0 + i));
        f.listener->Listen();
        f.listener->SetAcceptCallback(MakeCallback(&OnConnRequest), MakeBoundCallback(&OnAccept, (int)i));

        f.snd = DynamicCast<TcpSocketBase>(Socket::CreateSocket(f.snode, TcpSocketFactory::GetTypeId()));
        f.snd->SetConnectCallback(MakeBoundCallback(&OnConnected, (int)i), MakeBoundCallback(&OnConnectFailed, (int)i));
        f.snd->SetSendCallback(MakeBoundCallback(&OnSendSpace, (int)i));
        f.snd->TraceConnectWithoutContext("CongestionWindow", MakeBoundCallback(&OnCwnd, (int)i));
        f.snd->TraceConnectWithoutContext("BytesInFlight", MakeBoundCallback(&OnInflight, (int)i));
        f.snd->TraceConnectWithoutContext("RTT", MakeBoundCallback(&OnSrtt, (int)i));
        f.snd->TraceConnectWithoutContext("LastRTT", MakeBoundCallback(&OnLastRtt, (int)i));
        f.snd->TraceConnectWithoutContext("HighestRxAck", MakeBoundCallback(&OnHighAck, (int)i));
        f.snd->TraceConnectWithoutContext("CongState", MakeBoundCallback(&OnCongState, (int)i));
        f.snd->TraceConnectWithoutContext("Tx", MakeBoundCallback(&OnSenderTx, (int)i));
        f.snd->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnSenderRx, (int)i));
        if (pace)
            f.snd->TraceConnectWithoutContext("PacingRate", MakeBoundCallback(&OnPacing, (int)i));
        if (f.cfg.start_ns < c.duration_ns)
            Simulator::Schedule(NanoSeconds(f.cfg.start_ns), &StartFlow, (int)i);
    }

    if (c.ping_ns > 0)
    {
        Ptr<Ping> ping = CreateObject<Ping>();
        ping->SetAttribute("Destination", AddressValue(pingDst));
        ping->SetAttribute("Interval", TimeValue(NanoSeconds(c.ping_ns)));
        ping->SetAttribute("VerboseMode", EnumValue(Ping::SILENT));
        pingL->AddApplication(ping);
        ping->TraceConnectWithoutContext("Rtt", MakeCallback(&OnPingRtt));
        ping->SetStartTime(Seconds(0));
        ping->SetStopTime(NanoSeconds(c.duration_ns));
    }

    Simulator::Schedule(Seconds(FAST_SAMPLE_S), &FastSample);
    if (c.sample_ns > 0)
        for (int64_t t = c.sample_ns; t <= c.duration_ns; t += c.sample_ns)
            Simulator::Schedule(NanoSeconds(t), &Sample);
    Simulator::Stop(NanoSeconds(c.duration_ns) + TimeStep(1));
    auto sim0 = std::chrono::steady_clock::now();
    Simulator::Run();
    double simWall = std::chrono::duration<double>(std::chrono::steady_clock::now() - sim0).count();
    uint64_t events = Simulator::GetEventCount();
    double dur = c.duration_ns / 1e9;

    // ---- report ----
    std::ostringstream o;
    o << "{\"flows\":[";
    for (size_t i = 0; i < n; i++)
    {
        FlowState& f = g_flows[i];
        if (i)
            o << ",";
        double start = f.cfg.start_ns / 1e9;
        o << "{\"flow_id\":" << f.cfg.id << ",\"group\":" << f.cfg.group << ",\"start_s\":" << Json::Num(start);
        if (!f.started)
        {
            o << ",\"completed\":false}";
            continue;
        }
        double end = f.completed ? f.doneAt : dur;
        uint64_t got = f.completed ? (uint64_t)f.cfg.size : f.rxBytes;
        double gp = end > start ? got * 8.0 / (end - start) : NAN;
        int64_t acked = f.highAck.GetValue() > 0 ? (int64_t)f.highAck.GetValue() - 1 : 0; // the SYN
        if (f.cfg.size >= 0)
            acked = std::min<int64_t>(acked, f.cfg.size);
        double mean = NAN, cw = NAN;
        if (!f.rttSamples.empty())
        {
            mean = 0;
            for (double x : f.rttSamples)
                mean += x;
            mean /= f.rttSamples.size();
        }
        if (!f.cwndSamples.empty())
        {
            cw = 0;
            for (double x : f.cwndSamples)
                cw += x;
            cw /= f.cwndSamples.size();
        }
        o << ",\"end_s\":" << Json::Num(end) << ",\"goodput_bps\":" << Json::Num(gp)
          << ",\"bytes_acked\":" << acked << ",\"retransmits\":" << f.retrans << ",\"loss_events\":" << f.lossEvents
          << ",\"rtt_min_ms\":" << Json::Num(f.minRtt != Time::Max() ? f.minRtt.GetSeconds() * 1e3 : NAN)
          << ",\"rtt_mean_ms\":" << Json::Num(mean) << ",\"rtt_p50_ms\":" << Json::Num(Pct(f.rttSamples, 50))
          << ",\"rtt_p95_ms\":" << Json::Num(Pct(f.rttSamples, 95))
          << ",\"rtt_p99_ms\":" << Json::Num(Pct(f.rttSamples, 99)) << ",\"cwnd_mean\":" << Json::Num(cw)
          << ",\"fct_s\":" << Json::Num(f.completed ? f.doneAt - start : NAN)
          << ",\"completed\":" << (f.completed ? "true" : "false") << ",\"data_sent\":" << f.dataSent
          << ",\"data_received\":" << f.dataReceived << ",\"data_dropped\":" << g_flowDrops[i] << "}";
    }
    o << "],\"series\":{\"flow_id\":" << Arr(g_series.flow) << ",\"t_s\":" << Arr(g_series.t)
      << ",\"goodput_bps\":" << Arr(g_series.goodput) << ",\"cwnd_pkts\":" << Arr(g_series.cwnd, true)
      << ",\"rtt_ms\":" << Arr(g_series.rtt) << ",\"pacing_bps\":" << Arr(g_series.pacing)
      << ",\"inflight_pkts\":" << Arr(g_series.inflight, true) << ",\"cc_state\":" << Arr(g_series.state)
      << ",\"min_rtt_ms\":" << Arr(g_series.minRtt) << ",\"retransmits\":" << Arr(g_series.retrans) << "}";
    o << ",\"link_series\":{\"t_s\":" << Arr(g_link.t) << ",\"queue_bytes\":" << Arr(g_link.queue)
      << ",\"sojourn_ms\":" << Arr(g_link.sojourn) << ",\"probe_rtt_ms\":" << Arr(g_link.probe)
      << ",\"probe_rtt_p50_ms\":" << Arr(g_link.p50) << ",\"probe_rtt_p95_ms\":" << Arr(g_link.p95) << "}";
    uint64_t drops = g_dir[0].dropped_queue + g_dir[1].dropped_queue;
    o << ",\"run\":{\"link_utilisation\":"
      << Json::Num(g_dir[0].departed_ip_bytes * 8.0 / (c.rate_bps * dur)) << ",\"drops\":" << drops
      << ",\"ce_marked\":" << g_dir[0].ce_marked + g_dir[1].ce_marked
      << ",\"random_losses\":" << g_dir[0].dropped_loss + g_dir[1].dropped_loss
      << ",\"probe_rtt_p50_ms\":" << Json::Num(Pct(g_pingRtts, 50))
      << ",\"probe_rtt_p95_ms\":" << Json::Num(Pct(g_pingRtts, 95))
      << ",\"probe_rtt_p99_ms\":" << Json::Num(Pct(g_pingRtts, 99))
      << ",\"sojourn_p50_ms\":" << Json::Num(Pct(g_sojourn, 50))
      << ",\"sojourn_p95_ms\":" << Json::Num(Pct(g_sojourn, 95))
      << ",\"sojourn_p99_ms\":" << Json::Num(Pct(g_sojourn, 99)) << ",\"events\":" << events
      << ",\"sim_wall_s\":" << Json::Num(simWall) << "}";
    const char* sides[2] = {"sender", "receiver"};
    o << ",\"counters\":[";
    for (int s = 0; s < 2; s++)
    {
        o << (s ? "," : "") << "{\"side\":\"" << sides[s] << "\",\"TcpOutSegs\":" << g_side[s].out
          << ",\"TcpInSegs\":" << g_side[s].in << ",\"TcpRetransSegs\":" << g_side[s].retrans
          << ",\"TcpExtTCPTimeouts\":" << g_side[s].timeouts << ",\"TcpExtTCPSackRecovery\":" << g_side[s].recoveries
          << "}";
    }
    o << "],\"links\":[";
    const char* names[2] = {"bottleneck/fwd", "bottleneck/rev"};
    for (int dir = 0; dir < 2; dir++)
    {
        uint64_t held = 0;
        if (aqm)
            held = g_disc[dir]->GetNPackets();
        else
            held = (dir == 0 ? b1 : b2)->GetQueue()->GetNPackets();
        o << (dir ? "," : "") << "{\"name\":\"" << names[dir] << "\",\"arrived\":" << g_dir[dir].arrived
          << ",\"departed\":" << g_dir[dir].departed << ",\"dropped_queue\":" << g_dir[dir].dropped_queue
          << ",\"dropped_loss\":" << g_dir[dir].dropped_loss << ",\"held\":" << held
          << ",\"ce_marked\":" << g_dir[dir].ce_marked << "}";
    }
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    o << "],\"wall_s\":" << Json::Num(wall) << "}\n";
    Simulator::Destroy();
    std::cout << o.str();
    return 0;
}
